package org.trainwatch.tests;

import java.util.ArrayList;
import java.util.List;
import org.trainwatch.NanTensorHook;
import org.trainwatch.RunContext;

/**
 * The seed user's own NaN hook, as a TF1 user writes it: TF's NanTensorHook with after_run
 * overridden by the action they need, here recording the step and loss of every NaN it sees. With
 * {@code callSuper} it then runs the built-in check too (TF's {@code super().after_run(...)}): NaN
 * fails the run with NanLossDuringTraining; without it the custom action is all that happens.
 */
public class NanTensorHookCustom extends NanTensorHook {
  /** The custom action's record: "step loss" per NaN seen. */
  final List<String> divergences = new ArrayList<>();
  private final boolean callSuper;

  public NanTensorHookCustom(String lossTensor, boolean failOnNanLoss, boolean callSuper) {
    super(lossTensor, failOnNanLoss);
    this.callSuper = callSuper;
  }

  @Override
  public void afterRun(RunContext runContext) {
    double loss = runContext.result("loss").doubleValue();  // run_values.results: the loss the built-in fetched
    if (Double.isNaN(loss)) divergences.add(runContext.session().globalStep() + " " + loss);
    if (callSuper) super.afterRun(runContext);
  }
}
