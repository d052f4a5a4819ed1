package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"fmt"
	"math"
	"runtime"
	"unsafe"
)

// DType is a tw_dtype: an element type of the library.
type DType int32

// The element types of include/trainwatch/common.h.
const (
	Bool       DType = C.TW_BOOL
	Int8       DType = C.TW_INT8
	Int16      DType = C.TW_INT16
	Int32      DType = C.TW_INT32
	Int64      DType = C.TW_INT64
	Uint8      DType = C.TW_UINT8
	Uint16     DType = C.TW_UINT16
	Uint32     DType = C.TW_UINT32
	Uint64     DType = C.TW_UINT64
	Float16    DType = C.TW_FLOAT16
	BFloat16   DType = C.TW_BFLOAT16
	Float32    DType = C.TW_FLOAT32
	Float64    DType = C.TW_FLOAT64
	Float8E4M3 DType = C.TW_FLOAT8_E4M3FN
	Float8E5M2 DType = C.TW_FLOAT8_E5M2
)

// String is the library's name: "float32", "bfloat16", …
func (d DType) String() string { return C.GoString(C.tw_dtype_name(C.tw_dtype(d))) }

// Size is the size of one element in bytes (0 for an invalid dtype).
func (d DType) Size() int { return int(C.tw_dtype_size(C.tw_dtype(d))) }

// Element is a Go type the library reads and writes as one of its dtypes. (float16, bfloat16 and
// fp8 have no Go type: reach them as uint16/uint8 through a Tensor of that dtype's size.)
type Element interface {
	int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64 | float32 | float64
}

func dtypeOf[T Element]() DType {
	var zero T
	switch any(zero).(type) {
	case int8:
		return Int8
	case int16:
		return Int16
	case int32:
		return Int32
	case int64:
		return Int64
	case uint8:
		return Uint8
	case uint16:
		return Uint16
	case uint32:
		return Uint32
	case uint64:
		return Uint64
	case float32:
		return Float32
	default:
		return Float64
	}
}

func elementCount(shape []int64) (int, error) {
	n := int64(1)
	for _, extent := range shape {
		if extent < 0 {
			return 0, invalid("negative extent in shape %v", shape)
		}
		if extent != 0 && n > math.MaxInt64/extent {
			return 0, invalid("shape %v is too large", shape)
		}
		n *= extent
	}
	return int(n), nil
}

// View is a borrowed, read-write view of a tensor the library lends: a fetched result, a feed, a
// variable. Zero copy: valid until the callback that received it returns (for Session.Variable,
// while the session is open). Copy the values to keep them.
type View struct {
	Name  string
	DType DType
	Shape []int64
	data  unsafe.Pointer
	// strided views (never produced for outputs and variables) cannot be read as slices
	strided bool
}

// Len is the number of elements.
func (v View) Len() int {
	n, err := elementCount(v.Shape)
	if err != nil {
		return 0
	}
	return n
}

// View returns v itself, so that Values and Scalar take Views and Tensors alike.
func (v View) View() View { return v }

// Viewer is a View or a *Tensor.
type Viewer interface{ View() View }

func viewOf(t *C.tw_tensor) View {
	v := View{Name: C.GoString(t.name), DType: DType(t.dtype), data: t.data}
	if t.ndim > 0 && t.shape != nil {
		shape := unsafe.Slice((*int64)(unsafe.Pointer(t.shape)), int(t.ndim))
		v.Shape = append([]int64(nil), shape...)
		if t.strides != nil {
			strides := unsafe.Slice((*int64)(unsafe.Pointer(t.strides)), int(t.ndim))
			expected := int64(1)
			for i := len(shape) - 1; i >= 0; i-- {
				if shape[i] > 1 && strides[i] != expected {
					v.strided = true
				}
				expected *= shape[i]
			}
		}
	}
	return v
}

// Values returns the elements of v as a []T over the library's (or the Tensor's) memory, zero
// copy: writes go straight to it. Fails for another dtype or a strided view.
func Values[T Element](v Viewer) ([]T, error) {
	view := v.View()
	if want := dtypeOf[T](); view.DType != want {
		return nil, invalid("'%s' is %v, not %v", view.Name, view.DType, want)
	}
	if view.strided {
		return nil, invalid("'%s' is strided", view.Name)
	}
	n := view.Len()
	if n == 0 {
		return []T{}, nil
	}
	if view.data == nil {
		return nil, invalid("'%s' has no data", view.Name)
	}
	if uintptr(view.data)%unsafe.Alignof(*new(T)) != 0 {
		return nil, invalid("'%s' is not aligned for %v", view.Name, view.DType)
	}
	return unsafe.Slice((*T)(view.data), n), nil
}

// Scalar returns the only element of a one-element view.
func Scalar[T Element](v Viewer) (T, error) {
	values, err := Values[T](v)
	if err != nil {
		var zero T
		return zero, err
	}
	if len(values) != 1 {
		var zero T
		return zero, invalid("'%s' has %d elements, not 1", v.View().Name, len(values))
	}
	return values[0], nil
}

// Tensor is a named n-dimensional array in C memory, so that the library may keep pointing at it:
// a variable the session checkpoints and restores in place, or a feed. Read and write it through
// Values. Its memory is freed by Free, or by the garbage collector once no Tensor, Options or
// Session refers to it.
type Tensor struct {
	name  string
	dtype DType
	shape []int64
	c     *tensorMemory
}

type tensorMemory struct {
	data  unsafe.Pointer
	name  *C.char
	shape *C.int64_t
	users int // Options and Sessions registering it
}

// heldTensors are the tensors an Options, Saver or Session registers: each counts among its
// tensor's users, and a tensor is not freed while it has any.
type heldTensors []*Tensor

// add holds ts, copied into h's own slice (never the caller's).
func (h *heldTensors) add(ts ...*Tensor) {
	for _, t := range ts {
		t.c.users++
	}
	*h = append(*h, ts...)
}

// release lets every held tensor go.
func (h *heldTensors) release() {
	for _, t := range *h {
		t.c.users--
	}
	*h = nil
}

func (m *tensorMemory) free() {
	C.free(m.data)
	C.free(unsafe.Pointer(m.name))
	C.free(unsafe.Pointer(m.shape))
	m.data, m.name, m.shape = nil, nil, nil
}

// NewTensor allocates a zeroed tensor.
func NewTensor(name string, dtype DType, shape ...int64) (*Tensor, error) {
	if dtype.Size() == 0 {
		return nil, invalid("tensor '%s': invalid dtype %d", name, int32(dtype))
	}
	n, err := elementCount(shape)
	if err != nil {
		return nil, err
	}
	cname, err := cString("tensor name", name)
	if err != nil {
		return nil, err
	}
	m := &tensorMemory{name: cname}
	m.data = C.calloc(C.size_t(n+1), C.size_t(dtype.Size())) // +1: never a NULL for zero elements
	if len(shape) > 0 {
		m.shape = (*C.int64_t)(C.malloc(C.size_t(8 * len(shape))))
		copy(unsafe.Slice((*int64)(unsafe.Pointer(m.shape)), len(shape)), shape)
	}
	if m.data == nil {
		m.free()
		return nil, &Error{Status: ResourceExhausted, Message: fmt.Sprintf("tensor '%s': out of memory", name)}
	}
	runtime.SetFinalizer(m, (*tensorMemory).free)
	return &Tensor{name: name, dtype: dtype, shape: append([]int64(nil), shape...), c: m}, nil
}

// TensorOf copies values into a new tensor of their dtype. Without a shape it is 1-d; with one, the
// shape's element count must be len(values) (an empty shape makes a scalar of one value).
func TensorOf[T Element](name string, values []T, shape ...int64) (*Tensor, error) {
	if shape == nil {
		shape = []int64{int64(len(values))}
	}
	if n, err := elementCount(shape); err != nil {
		return nil, err
	} else if n != len(values) {
		return nil, invalid("tensor '%s': shape %v does not hold %d elements", name, shape, len(values))
	}
	t, err := NewTensor(name, dtypeOf[T](), shape...)
	if err != nil {
		return nil, err
	}
	data, _ := Values[T](t)
	copy(data, values)
	return t, nil
}

// ScalarTensor is a 0-d tensor holding value.
func ScalarTensor[T Element](name string, value T) (*Tensor, error) {
	return TensorOf(name, []T{value}, []int64{}...)
}

func (t *Tensor) Name() string   { return t.name }
func (t *Tensor) DType() DType   { return t.dtype }
func (t *Tensor) Shape() []int64 { return append([]int64(nil), t.shape...) }
func (t *Tensor) live() bool     { return t != nil && t.c != nil && t.c.data != nil }

// View is a view of the tensor's memory (valid until Free).
func (t *Tensor) View() View {
	if !t.live() {
		return View{Name: t.name, DType: t.dtype, Shape: t.Shape()}
	}
	return View{Name: t.name, DType: t.dtype, Shape: t.Shape(), data: t.c.data}
}

// Free releases the memory now. It fails while Options or an open Session still register the
// tensor (the library points at it); freeing twice is a no-op.
func (t *Tensor) Free() error {
	if !t.live() {
		return nil
	}
	if t.c.users > 0 {
		return &Error{Status: FailedPrecondition, Message: fmt.Sprintf("tensor '%s' is still registered with %d options/sessions", t.name, t.c.users)}
	}
	runtime.SetFinalizer(t.c, nil)
	t.c.free()
	return nil
}

func (t *Tensor) raw() C.tw_tensor {
	var r C.tw_tensor
	C.tw_tensor_init(&r)
	r.name = t.c.name
	r.dtype = C.int32_t(t.dtype)
	r.data = t.c.data
	r.ndim = C.int32_t(len(t.shape))
	r.shape = t.c.shape
	return r
}

// ScanResult is what Scan finds.
type ScanResult struct {
	NaN, PosInf, NegInf int64
	// FirstNonFinite is the row-major index of the first NaN or ±Inf, -1 when all are finite.
	FirstNonFinite int64
}

// Scan counts the NaN, +Inf and -Inf values of a slice (SIMD, at memory bandwidth).
func Scan[T Element](values []T) (ScanResult, error) {
	var out C.tw_scan_result
	shape := []int64{int64(len(values))}
	var data unsafe.Pointer
	if len(values) > 0 {
		data = unsafe.Pointer(&values[0])
	}
	err := check(func() C.tw_status {
		return C.twgo_scan(&out, C.int32_t(dtypeOf[T]()), data, 1, (*C.int64_t)(unsafe.Pointer(&shape[0])))
	})
	if err != nil {
		return ScanResult{}, err
	}
	return ScanResult{NaN: int64(out.nan_count), PosInf: int64(out.pos_inf_count), NegInf: int64(out.neg_inf_count),
		FirstNonFinite: int64(out.first_nonfinite_index)}, nil
}

// withViews passes views (library memory or Tensors, never Go memory) to C as an array of pointers
// to views, built in C memory for the call.
func withViews(vs []View, call func(**C.tw_tensor, C.size_t) C.tw_status) error {
	n := len(vs)
	structs := (*C.tw_tensor)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof(C.tw_tensor{}))))
	pointers := (**C.tw_tensor)(C.calloc(C.size_t(n+1), C.size_t(unsafe.Sizeof((*C.tw_tensor)(nil)))))
	var names []*C.char
	var shapes []unsafe.Pointer
	defer func() {
		for _, p := range names {
			C.free(unsafe.Pointer(p))
		}
		for _, p := range shapes {
			C.free(p)
		}
		C.free(unsafe.Pointer(structs))
		C.free(unsafe.Pointer(pointers))
	}()
	ts, ps := unsafe.Slice(structs, n+1), unsafe.Slice(pointers, n+1)
	for i, v := range vs {
		name, err := cString("view name", v.Name)
		if err != nil {
			return err
		}
		names = append(names, name)
		C.tw_tensor_init(&ts[i])
		ts[i].name, ts[i].dtype, ts[i].data, ts[i].ndim = name, C.int32_t(v.DType), v.data, C.int32_t(len(v.Shape))
		if len(v.Shape) > 0 {
			shape := C.malloc(C.size_t(8 * len(v.Shape)))
			shapes = append(shapes, shape)
			copy(unsafe.Slice((*int64)(shape), len(v.Shape)), v.Shape)
			ts[i].shape = (*C.int64_t)(shape)
		}
		ps[i] = &ts[i]
	}
	return check(func() C.tw_status { return call(pointers, C.size_t(n)) })
}
