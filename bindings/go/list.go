package trainwatch

/*
#include "glue.h"
*/
import "C"

// collect reads a whole C list, which the C API gives as a count and an accessor by index (the
// tw_*_count / tw_*_at pairs): at(index, &element) calls the accessor on an element that starts as
// its zero value, and value turns each element into what the Go API returns. Every list getter
// goes through it.
func collect[E, T any](count C.size_t, at func(index C.size_t, element *E) C.tw_status, value func(*E) T) ([]T, error) {
	all := make([]T, 0, int(count))
	for i := C.size_t(0); i < count; i++ {
		var element E
		if err := check(func() C.tw_status { return at(i, &element) }); err != nil {
			return nil, err
		}
		all = append(all, value(&element))
	}
	return all, nil
}

// goString copies a string the library returned (NULL reads as "").
func goString(s **C.char) string { return C.GoString(*s) }
