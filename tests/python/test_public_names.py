"""Every name ARCHITECTURE.md's "The Python API" promises exists, with tf.compat.v1.train's signatures."""
import inspect

import pytest

import trainwatch as tw

CLASSES = ["MonitoredTrainingSession", "LoggingTensorHook", "StepCounterHook", "SummarySaverHook", "FeedFnHook",
           "FinalOpsHook", "GlobalStepWaiterHook", "ProfilerHook", "SessionRunHook", "SessionRunArgs", "SessionRunContext", "SessionRunValues", "MonitoredSession",
           "SingularMonitoredSession", "ChiefSessionCreator", "WorkerSessionCreator", "Scaffold",
           "StopAtStepHook", "CheckpointSaverHook", "CheckpointSaverListener", "NanTensorHook",
           "SecondOrStepTimer", "Saver", "Shard", "StepContext"]
FUNCTIONS = ["summary_iterator", "latest_checkpoint", "list_variables", "load_variable", "check_numerics",
             "scan", "tensor_stats", "bfloat16_to_float32", "get_global_step", "get_or_create_global_step",
             "create_global_step"]
ERRORS = ["OpError", "OutOfRangeError", "AbortedError", "UnavailableError", "InvalidArgumentError",
          "DeadlineExceededError", "DataLossError", "NotFoundError", "FailedPreconditionError",
          "NanLossDuringTrainingError", "CancelledError", "UnknownError", "AlreadyExistsError",
          "PermissionDeniedError", "ResourceExhaustedError", "UnimplementedError", "InternalError",
          "UnauthenticatedError"]


@pytest.mark.parametrize("name", CLASSES)
def test_class_exists(name):
    assert inspect.isclass(getattr(tw, name))
    assert name in tw.__all__


@pytest.mark.parametrize("name", FUNCTIONS)
def test_function_exists(name):
    assert callable(getattr(tw, name))
    assert name in tw.__all__


@pytest.mark.parametrize("name", CLASSES + FUNCTIONS)
def test_tf_train_names_are_in_trainwatch_train_as_at_the_top_level_H31(name):
    if name in ("Shard", "StepContext", "check_numerics", "scan", "tensor_stats", "bfloat16_to_float32"):
        assert not hasattr(tw.train, name)  # trainwatch's own, not tf.train's
    else:
        assert getattr(tw.train, name) is getattr(tw, name) and name in tw.train.__all__


@pytest.mark.parametrize("name", ERRORS)
def test_error_class_is_an_op_error(name):
    cls = getattr(tw, name)
    assert issubclass(cls, tw.OpError) and issubclass(cls, Exception)
    assert isinstance(cls("text").error_code, int)


def test_error_classes_build_like_tf():
    e = tw.OutOfRangeError(None, None, "end of input")
    assert (e.node_def, e.op, e.message, str(e)) == (None, None, "end of input", "end of input")
    assert tw.AbortedError("preempted").message == "preempted"
    assert tw.AbortedError.error_code == tw.native.TW_ABORTED


def test_nan_loss_error_is_a_runtime_error_B33():
    assert issubclass(tw.NanLossDuringTrainingError, RuntimeError)


SIGNATURES = {
    "MonitoredSession": ["session_creator", "hooks", "stop_grace_period_secs"],
    "SingularMonitoredSession": ["hooks", "scaffold", "master", "config", "checkpoint_dir", "stop_grace_period_secs",
                                 "checkpoint_filename_with_path"],
    "ChiefSessionCreator": ["scaffold", "master", "config", "checkpoint_dir", "checkpoint_filename_with_path"],
    "WorkerSessionCreator": ["scaffold", "master", "config", "max_wait_secs"],
    "StopAtStepHook": ["num_steps", "last_step"],
    "NanTensorHook": ["loss_tensor", "fail_on_nan_loss"],
    "CheckpointSaverHook": ["checkpoint_dir", "save_secs", "save_steps", "saver", "checkpoint_basename", "scaffold",
                            "listeners"],
    "SecondOrStepTimer": ["every_secs", "every_steps"],
    "LoggingTensorHook": ["tensors", "every_n_iter", "every_n_secs", "at_end", "formatter"],
    "StepCounterHook": ["every_n_steps", "every_n_secs", "output_dir", "summary_writer"],
    "SummarySaverHook": ["save_steps", "save_secs", "output_dir", "summary_writer", "scaffold", "summary_op"],
    "FeedFnHook": ["feed_fn"],
    "FinalOpsHook": ["final_ops", "final_ops_feed_dict"],
    "GlobalStepWaiterHook": ["wait_until_step"],
    "ProfilerHook": ["save_steps", "save_secs", "output_dir", "show_dataflow", "show_memory"],
    "get_global_step": ["graph"],
    "get_or_create_global_step": ["graph"],
    "create_global_step": ["graph"],
    "MonitoredTrainingSession": ["master", "is_chief", "checkpoint_dir", "scaffold", "hooks", "chief_only_hooks",
                                 "save_checkpoint_secs", "save_summaries_steps", "save_summaries_secs", "config",
                                 "stop_grace_period_secs", "log_step_count_steps", "max_wait_secs",
                                 "save_checkpoint_steps", "summary_dir"],
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_tf_signature_prefix(name):
    parameters = list(inspect.signature(getattr(tw, name)).parameters)
    assert parameters[:len(SIGNATURES[name])] == SIGNATURES[name]


def test_tf_defaults_T():
    p = inspect.signature(tw.MonitoredTrainingSession).parameters
    # TF's True unless a collective is given (then rank == 0): tests/python/test_distributed_api.py.
    assert p["is_chief"].default is tw.USE_DEFAULT
    assert p["log_step_count_steps"].default == 100
    assert p["max_wait_secs"].default == 7200
    assert p["max_to_keep"].default == 5
    assert p["keep_checkpoint_every_n_hours"].default == 10000.0
    assert inspect.signature(tw.WorkerSessionCreator).parameters["max_wait_secs"].default == 1800
    assert inspect.signature(tw.NanTensorHook).parameters["fail_on_nan_loss"].default is True
    assert inspect.signature(tw.StepCounterHook).parameters["every_n_steps"].default == 100
    assert inspect.signature(tw.ProfilerHook).parameters["output_dir"].default == ""


def test_session_run_args_defaults_H2_H3():
    args = tw.SessionRunArgs("loss")
    assert (args.fetches, args.feed_dict, args.options) == ("loss", None, None)
    assert tuple(tw.SessionRunValues(1, 2, 3)) == (1, 2, 3)


def test_version():
    assert tw.__version__ == tw.native.version_string()
