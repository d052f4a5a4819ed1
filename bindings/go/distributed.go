package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"runtime"
	"unsafe"
)

// ReduceOp is the reduction of Collective.AllreduceInt64.
type ReduceOp int32

const (
	ReduceSum ReduceOp = C.TW_REDUCE_SUM
	ReduceMin ReduceOp = C.TW_REDUCE_MIN
	ReduceMax ReduceOp = C.TW_REDUCE_MAX
)

// Collective is a job's communication engine (MPI, a launcher's own, …) that a Go program brings to
// the library's collective seam (trainwatch/distributed.h, experimental: it may still change). Every
// rank sets one on the options of its session; the session calls it from the goroutine that called
// the session (never concurrently for one session), every rank the same calls in the same order.
// The slices are the library's memory, valid during the call only. timeoutSecs < 0 means no limit;
// an operation that times out returns NewError(DeadlineExceeded, "what it waited for") (Unavailable
// when a peer is known gone). A method must not call back into the session.
type Collective interface {
	Rank() int
	WorldSize() int
	AllreduceInt64(values []int64, op ReduceOp, timeoutSecs float64) error
	Broadcast(data []byte, root int, timeoutSecs float64) error
	Barrier(timeoutSecs float64) error
}

// SetCollective sets the collective every session created from these options uses (nil removes it).
// The options and every session made from them keep it until they are done with it.
func (o *Options) SetCollective(c Collective) error {
	if c == nil {
		return o.set(func() C.tw_status { return C.twgo_options_set_collective(o.c, 0, 1, 0) })
	}
	rank, world := c.Rank(), c.WorldSize()
	return o.setCallback(false, c, func(h C.uintptr_t) C.tw_status {
		return C.twgo_options_set_collective(o.c, C.int32_t(rank), C.int32_t(world), h)
	})
}

//export twgoAllreduce
func twgoAllreduce(handle C.uintptr_t, values *C.int64_t, count C.size_t, op C.int32_t, timeout C.double) C.tw_status {
	c := valueOf[Collective](handle)
	return guard(func() error {
		var slice []int64
		if count > 0 {
			slice = unsafe.Slice((*int64)(unsafe.Pointer(values)), int(count))
		}
		return c.AllreduceInt64(slice, ReduceOp(op), float64(timeout))
	})
}

//export twgoBroadcast
func twgoBroadcast(handle C.uintptr_t, data unsafe.Pointer, size C.size_t, root C.int32_t, timeout C.double) C.tw_status {
	c := valueOf[Collective](handle)
	return guard(func() error {
		var slice []byte
		if size > 0 {
			slice = unsafe.Slice((*byte)(data), int(size))
		}
		return c.Broadcast(slice, int(root), float64(timeout))
	})
}

//export twgoBarrier
func twgoBarrier(handle C.uintptr_t, timeout C.double) C.tw_status {
	c := valueOf[Collective](handle)
	return guard(func() error { return c.Barrier(float64(timeout)) })
}

// AddShard registers t as this rank's box of a tensor sharded across the ranks: globalShape is the
// whole tensor's shape, offset where the box starts in it (len(t.Shape()) entries each). t stays
// allocated while these options or a session or saver made from them hold it.
func (o *Options) AddShard(t *Tensor, globalShape, offset []int64) error {
	if !t.live() {
		return invalid("shard is nil or freed")
	}
	if len(globalShape) != len(t.shape) || len(offset) != len(t.shape) {
		return invalid("shard '%s' has %d dimensions: global shape %v and offset %v must have as many", t.name, len(t.shape), globalShape, offset)
	}
	// One C block: the view, then the global shape and the offset.
	n := len(t.shape)
	block := C.calloc(1, C.size_t(unsafe.Sizeof(C.tw_tensor{}))+C.size_t(16*(n+1)))
	defer C.free(block)
	raw := (*C.tw_tensor)(block)
	*raw = t.raw()
	extents := unsafe.Slice((*int64)(unsafe.Add(block, unsafe.Sizeof(C.tw_tensor{}))), 2*n+2)
	copy(extents[:n], globalShape)
	copy(extents[n+1:], offset)
	global := (*C.int64_t)(unsafe.Pointer(&extents[0]))
	start := (*C.int64_t)(unsafe.Pointer(&extents[n+1]))
	if err := o.set(func() C.tw_status { return C.tw_options_add_shard(o.c, raw, global, start) }); err != nil {
		return err
	}
	o.variables.add(t)
	runtime.KeepAlive(t)
	return nil
}
