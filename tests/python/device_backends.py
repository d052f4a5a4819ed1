"""The two devices the Python device tests run on without a GPU, behind one interface:

- "fake": fake_device.Device, whose memory the host cannot read (PROT_NONE) and whose work completes
  late on a worker thread; tensors are FakeTensors.
- "torch-cpu": trainwatch.devices.TorchDevice on torch's CPU: torch's copies, pinned-memory
  bookkeeping and reductions run for real; tensors are CPU torch tensors posing as CUDA memory
  through __cuda_array_interface__ (what a CUDA torch tensor's address is to the library).
"""
import numpy as np

import trainwatch as tw

import fake_device


class FakeBackend:
    name = "fake"

    def __init__(self):
        self.device = fake_device.Device()

    def tensor(self, value, dtype=None):
        return self.device.tensor(value, dtype)

    @staticmethod
    def numpy(tensor):
        return tensor.numpy()

    @staticmethod
    def assign(tensor, value):
        tensor.assign(value)

    def fail(self, operation, message="injected failure"):
        self.device.fail[operation] = message

    def fail_later(self, operation, message="injected asynchronous failure"):
        self.device.fail_later[operation] = message

    def operations(self):
        return self.device.operations()


class HostTorchAsCuda:
    """A CPU torch tensor presented as device memory (a CUDA array interface over its storage)."""

    def __init__(self, tensor):
        self.tensor = tensor

    @property
    def __cuda_array_interface__(self):
        return {"shape": tuple(self.tensor.shape), "typestr": self.tensor.numpy().dtype.str,
                "data": (self.tensor.data_ptr(), False), "strides": None, "version": 2}

    def numpy(self):
        return self.tensor.numpy().copy()


class RecordingTorchDevice(tw.devices.TorchDevice):
    """TorchDevice on the CPU, recording its operations and failing those it is told to."""

    def __init__(self):
        super().__init__("cpu")
        self.calls, self.failing = [], {}
        for operation in ("copy_to_host", "copy_to_device", "count_nonfinite", "record", "wait", "alloc_pinned"):
            setattr(self, operation, self._recorded(operation, getattr(super(), operation)))

    def _recorded(self, operation, method):
        def call(*args):
            self.calls.append(operation)
            if operation in self.failing:
                raise RuntimeError(self.failing[operation])
            return method(*args)
        return call


class TorchCpuBackend:
    name = "torch-cpu"

    def __init__(self):
        import torch
        self.torch = torch
        self.device = RecordingTorchDevice()

    def tensor(self, value, dtype=None):
        return HostTorchAsCuda(self.torch.from_numpy(np.array(value, dtype=dtype, order="C")))

    @staticmethod
    def numpy(tensor):
        if isinstance(tensor, HostTorchAsCuda):
            return tensor.numpy()
        return tensor.numpy().copy()  # a torch tensor: what copy_tensor returned

    @staticmethod
    def assign(tensor, value):
        tensor.tensor.copy_(tensor.tensor.new_tensor(np.asarray(value)))

    def fail(self, operation, message="injected failure"):
        self.device.failing[operation] = message

    def fail_later(self, operation, message="injected asynchronous failure"):
        self.device.failing["wait"] = f"{operation}: {message}"

    def operations(self):
        return list(self.device.calls)


def make(name):
    return FakeBackend() if name == "fake" else TorchCpuBackend()
