namespace TrainWatch {

/// <summary>Checkpoint files (tf.train.latest_checkpoint and friends).</summary>
public static class Checkpoints {
  /// <summary>The newest checkpoint's path in `dir`, or null when there is none (TF's None).</summary>
  public static string Latest(string dir) {
    string path = Native.native.latest_checkpoint(dir ?? "");
    return path.Length == 0 ? null : path;
  }

  /// <summary>Throws DataLossException unless every checksum of the checkpoint matches.</summary>
  public static void Verify(string path) { Native.native.verify_checkpoint(path ?? ""); }
}

}  // namespace TrainWatch
