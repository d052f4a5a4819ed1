package trainwatch

/*
#include "glue.h"
*/
import "C"

import "unsafe"

// Stats are a tensor's numerics: counts, and min/max/mean over its finite elements (NaN when none).
type Stats struct {
	Elements, Finite, NaN, PosInf, NegInf int64
	FirstNonFinite                        int64 // -1 when all are finite
	Min, Max, Mean                        float64
}

// TensorStats computes v's numerics in one SIMD pass.
func TensorStats(v Viewer) (Stats, error) {
	var out C.tw_numerics_stats
	C.tw_numerics_stats_init(&out)
	err := withViews([]View{v.View()}, func(array **C.tw_tensor, _ C.size_t) C.tw_status {
		return C.tw_tensor_stats(&out, C.twgo_tensor_at(array, 0))
	})
	return Stats{Elements: int64(out.element_count), Finite: int64(out.finite_count), NaN: int64(out.nan_count),
		PosInf: int64(out.pos_inf_count), NegInf: int64(out.neg_inf_count), FirstNonFinite: int64(out.first_nonfinite_index),
		Min: float64(out.min), Max: float64(out.max), Mean: float64(out.mean)}, err
}

// HasNonFinite reports whether v holds a NaN or ±Inf (stopping at the first).
func HasNonFinite(v Viewer) (bool, error) {
	var out C.int
	err := withViews([]View{v.View()}, func(array **C.tw_tensor, _ C.size_t) C.tw_status {
		return C.tw_has_nonfinite(&out, C.twgo_tensor_at(array, 0))
	})
	return out != 0, err
}

// CheckNumerics is tf.debugging.check_numerics: InvalidArgument naming message and the first bad
// element when v holds NaN or ±Inf.
func CheckNumerics(v Viewer, message string) error {
	cmessage, err := cString("message", message)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cmessage))
	return withViews([]View{v.View()}, func(array **C.tw_tensor, _ C.size_t) C.tw_status {
		return C.tw_check_numerics(C.twgo_tensor_at(array, 0), cmessage)
	})
}

// NumericsTarget is the SIMD target the numerics kernels run on ("AVX2", …).
func NumericsTarget() string { return C.GoString(C.tw_numerics_target()) }
