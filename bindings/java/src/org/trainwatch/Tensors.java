package org.trainwatch;

/** Helpers over lists of tensors. */
final class Tensors {
  private Tensors() {}

  /** A native vector of the tensors' descriptions (the data is not copied). */
  static TensorVector vector(Tensor... tensors) {
    TensorVector v = new TensorVector();
    for (Tensor t : tensors) {
      if (t == null) throw new NullPointerException("a tensor in the list is null");
      v.add(t);
    }
    return v;
  }
}
