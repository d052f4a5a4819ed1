"""A MonitoredTrainingSession run as the checkpoint-directory tests drive it."""
import numpy as np

import trainwatch as tw


def train(checkpoint_dir, w, last_step, **kwargs):
    """One MonitoredTrainingSession run to `last_step`, checkpointing every 2 steps; its start step."""
    with tw.MonitoredTrainingSession(checkpoint_dir=str(checkpoint_dir), variables={"w": w},
                                     save_checkpoint_steps=2, save_summaries_steps=None, log_step_count_steps=None,
                                     hooks=[tw.StopAtStepHook(last_step=last_step)], **kwargs) as sess:
        start = sess.global_step
        while not sess.should_stop():
            sess.run(lambda ctx: np.add(w, 1, out=w))
    return start
