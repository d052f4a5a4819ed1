"""The first sess.run of a MonitoredTrainingSession over 1 GiB of numpy variables with its default
summaries (scalars the step publishes, T11), against the same session with summaries off
(save_summaries_steps=None) in the same run — the anchor — and, for the record, with histograms of
every variable asked for (summary_histograms="*", what the default wrote before T11). The step is a
pass over every variable (w *= 0.999), as a training step touches each weight, and publishes a loss.

usage: bench_default_summaries.py [MiB] [trials]   (defaults 1024, 5; target: default / off < 1.1)
"""
import logging
import statistics
import sys
import tempfile
import time

import numpy as np

import trainwatch as tw

VARIABLES = 16


def first_run_secs(variables, summary_dir, mode):
    arguments = {"save_summaries_steps": None} if mode == "off" else {}
    if mode == "every histogram":
        arguments["summary_histograms"] = "*"

    def step(ctx):
        total = 0.0
        for w in variables.values():
            w *= np.float32(0.999)
            total += float(w[0])
        return {"loss": np.float32(total)}

    with tw.MonitoredTrainingSession(variables=variables, summary_dir=summary_dir, log_step_count_steps=None,
                                     **arguments) as sess:
        start = time.perf_counter()
        sess.run(step)
        return time.perf_counter() - start


def main():
    mib = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
    trials = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    elements = mib * 1024 * 1024 // 4 // VARIABLES
    pattern = (np.arange(elements, dtype=np.float32) % 1000) * np.float32(1e-3) - np.float32(0.5)
    variables = {f"layer{v:02d}/kernel": pattern.copy() for v in range(VARIABLES)}
    logging.getLogger("trainwatch").setLevel(logging.WARNING)
    off, default = [], []
    with tempfile.TemporaryDirectory(prefix="tw_bench_summaries_") as summary_dir:
        for _ in range(trials):  # alternating, so that both see the same machine
            off.append(first_run_secs(variables, summary_dir, "off"))
            default.append(first_run_secs(variables, summary_dir, "default"))
        every = first_run_secs(variables, summary_dir, "every histogram")
    off_s, default_s = statistics.median(off), statistics.median(default)
    print(f"Python, first sess.run over {mib} MiB of variables in {VARIABLES} numpy arrays, median of {trials}:")
    print(f"  summaries off (anchor, save_summaries_steps=None): {off_s:.3f} s")
    print(f"  default summaries (scalars, T11):                  {default_s:.3f} s")
    print(f"  ratio default / off: {default_s / off_s:.3f} (target < 1.1)")
    print(f"  histograms of every variable asked for (summary_histograms=\"*\", once): {every:.3f} s "
          f"({every / off_s:.1f}x off)")


if __name__ == "__main__":
    main()
