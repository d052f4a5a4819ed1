"""A user's program against the installed wheel (tests/package/check_python.sh runs it from outside the
checkout): 100 steps of a linear model under MonitoredTrainingSession with a StopAtStepHook, a
NanTensorHook on the published loss and checkpoints; run again with a later last step, it resumes.

usage: consumer.py CHECKPOINT_DIR LAST_STEP EXPECTED_START
Prints "start S end E restored R w W" and exits non-zero when the session did not start at
EXPECTED_START (with the weights restored when it is not 0) or stop at LAST_STEP.
"""
import sys

import numpy as np
import trainwatch as tw

checkpoint_dir, last_step, expected_start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = np.random.default_rng(0)
x = rng.standard_normal((64, 4)).astype(np.float32)
y = x @ np.array([1.0, -2.0, 0.5, 3.0], dtype=np.float32)
w = np.zeros(4, dtype=np.float32)  # restored in place from the checkpoint on the second run


def step(ctx):
    error = x @ w - y
    w[:] -= 0.05 * (x.T @ error) / len(x)
    return {"loss": np.float32(np.mean(error * error))}


hooks = [tw.StopAtStepHook(last_step=last_step), tw.NanTensorHook("loss")]
with tw.MonitoredTrainingSession(checkpoint_dir=checkpoint_dir, save_checkpoint_steps=25,
                                 variables={"w": w}, hooks=hooks) as sess:
    start = sess.global_step
    restored = bool(np.any(w != 0))  # the session restored the checkpoint's weights into w
    while not sess.should_stop():
        sess.run(step)
    end = sess.global_step
print("start", start, "end", end, "restored", restored, "w", " ".join("%.3f" % v for v in w))
sys.exit(0 if (start, end, restored) == (expected_start, last_step, expected_start > 0) else 1)
