package trainwatch

/*
#include "glue.h"
*/
import "C"

import (
	"io"
	"runtime"
	"unsafe"
)

// SummaryWriter is TF's FileWriter: a handle on the shared event file writer of a log directory
// (TensorBoard's events.out.tfevents.*). Hooks given one take their own reference.
type SummaryWriter struct {
	c *C.tw_summary_writer
}

// SessionLogStatus is SessionLog.status.
type SessionLogStatus int32

const (
	SessionLogStart      SessionLogStatus = C.TW_SESSION_LOG_START
	SessionLogStop       SessionLogStatus = C.TW_SESSION_LOG_STOP
	SessionLogCheckpoint SessionLogStatus = C.TW_SESSION_LOG_CHECKPOINT
)

// OpenSummaryWriter opens the writer of logdir, creating the directory if needed.
func OpenSummaryWriter(logdir string) (*SummaryWriter, error) {
	cdir, err := cString("logdir", logdir)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cdir))
	w := &SummaryWriter{}
	if err := check(func() C.tw_status { return C.tw_summary_writer_open(&w.c, cdir) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(w, (*SummaryWriter).Release)
	return w, nil
}

func (w *SummaryWriter) live() error {
	if w == nil || w.c == nil {
		return &Error{Status: FailedPrecondition, Message: "summary writer is released"}
	}
	return nil
}

func (w *SummaryWriter) do(f func() C.tw_status) error {
	if err := w.live(); err != nil {
		return err
	}
	return check(f)
}

// AddScalar adds a scalar summary (rounded to float32, as TF).
func (w *SummaryWriter) AddScalar(tag string, step int64, value float64) error {
	ctag, err := cString("tag", tag)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(ctag))
	return w.do(func() C.tw_status { return C.tw_summary_writer_add_scalar(w.c, ctag, C.int64_t(step), C.double(value)) })
}

// AddHistogram adds the histogram of every element of values (a Tensor or a View).
func (w *SummaryWriter) AddHistogram(tag string, step int64, values Viewer) error {
	ctag, err := cString("tag", tag)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(ctag))
	if err := w.live(); err != nil {
		return err
	}
	return withViews([]View{values.View()}, func(array **C.tw_tensor, _ C.size_t) C.tw_status {
		return C.tw_summary_writer_add_histogram(w.c, ctag, C.int64_t(step), C.twgo_tensor_at(array, 0))
	})
}

// AddSessionLog adds a SessionLog event (checkpointPath for SessionLogCheckpoint).
func (w *SummaryWriter) AddSessionLog(step int64, status SessionLogStatus, checkpointPath, message string) error {
	cpath, err := cString("checkpoint path", checkpointPath)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	cmsg, err := cString("message", message)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cmsg))
	return w.do(func() C.tw_status {
		return C.tw_summary_writer_add_session_log(w.c, C.int64_t(step), C.tw_session_log_status(status), cpath, cmsg)
	})
}

// AddSummary adds an event holding an already serialized Summary protobuf.
func (w *SummaryWriter) AddSummary(step int64, summary []byte) error {
	data := C.CBytes(summary)
	defer C.free(data)
	return w.do(func() C.tw_status {
		return C.tw_summary_writer_add_summary(w.c, C.int64_t(step), data, C.size_t(len(summary)))
	})
}

// Flush writes every buffered event and syncs the file.
func (w *SummaryWriter) Flush() error {
	return w.do(func() C.tw_status { return C.tw_summary_writer_flush(w.c) })
}

// Path is the event file's absolute path ("" once released).
func (w *SummaryWriter) Path() string {
	if w == nil || w.c == nil {
		return ""
	}
	return C.GoString(C.tw_summary_writer_path(w.c))
}

// Close is FileWriter.close(): flushes and closes the shared writer for every handle on it, then
// releases this handle.
func (w *SummaryWriter) Close() error {
	err := w.do(func() C.tw_status { return C.tw_summary_writer_close(w.c) })
	w.Release()
	return err
}

// Release frees this handle only; the shared writer stays open for the hooks holding it.
func (w *SummaryWriter) Release() {
	if w == nil || w.c == nil {
		return
	}
	C.tw_summary_writer_destroy(w.c)
	w.c = nil
	runtime.SetFinalizer(w, nil)
}

// EventKind is which member of Event's oneof an event carries.
type EventKind int32

const (
	EventNone        EventKind = C.TW_EVENT_NONE
	EventFileVersion EventKind = C.TW_EVENT_FILE_VERSION
	EventSummary     EventKind = C.TW_EVENT_SUMMARY
	EventLogMessage  EventKind = C.TW_EVENT_LOG_MESSAGE
	EventSessionLog  EventKind = C.TW_EVENT_SESSION_LOG
	EventOther       EventKind = C.TW_EVENT_OTHER
)

// Histogram is a HistogramProto: Bucket[i] counts the values below BucketLimit[i] (and at or above
// the previous limit).
type Histogram struct {
	Min, Max, Num, Sum, SumSquares float64
	BucketLimit, Bucket            []float64
}

// SummaryValue is one Summary.Value: a scalar (Histogram nil) or a histogram; IsOther for the kinds
// not decoded (images, audio, tensors).
type SummaryValue struct {
	Tag       string
	Scalar    float32
	Histogram *Histogram
	IsOther   bool
}

// Event is one decoded event of an event file (copied out of the reader).
type Event struct {
	Kind             EventKind
	WallTime         float64
	Step             int64
	FileVersion      string
	Values           []SummaryValue
	SessionLogStatus SessionLogStatus
	CheckpointPath   string
	Message          string
	LogLevel         int32
}

// EventReader reads an event file (TFRecords of Events), verifying each record's CRCs.
type EventReader struct {
	c *C.tw_event_reader
}

// OpenEventReader opens path for reading from its first event.
func OpenEventReader(path string) (*EventReader, error) {
	cpath, err := cString("path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	r := &EventReader{}
	if err := check(func() C.tw_status { return C.tw_event_reader_open(&r.c, cpath) }); err != nil {
		return nil, err
	}
	runtime.SetFinalizer(r, (*EventReader).Close)
	return r, nil
}

// Next reads the next event; io.EOF after the last one, DataLoss for a corrupt record.
func (r *EventReader) Next() (*Event, error) {
	if r == nil || r.c == nil {
		return nil, &Error{Status: FailedPrecondition, Message: "event reader is closed"}
	}
	var e C.tw_event
	C.tw_event_init(&e)
	if err := check(func() C.tw_status { return C.tw_event_reader_next(&e, r.c) }); err != nil {
		if StatusOf(err) == OutOfRange {
			return nil, io.EOF
		}
		return nil, err
	}
	event := &Event{Kind: EventKind(e.kind), WallTime: float64(e.wall_time), Step: int64(e.step),
		FileVersion: C.GoString(e.file_version), SessionLogStatus: SessionLogStatus(e.session_log_status),
		CheckpointPath: C.GoString(e.checkpoint_path), Message: C.GoString(e.message), LogLevel: int32(e.log_level)}
	if e.value_count > 0 {
		for _, v := range unsafe.Slice(e.values, int(e.value_count)) {
			value := SummaryValue{Tag: C.GoString(v.tag), IsOther: v.kind == C.TW_SUMMARY_VALUE_OTHER}
			switch v.kind {
			case C.TW_SUMMARY_VALUE_SCALAR:
				value.Scalar = float32(v.simple_value)
			case C.TW_SUMMARY_VALUE_HISTOGRAM:
				h := v.histogram
				n := int(h.bucket_count)
				value.Histogram = &Histogram{Min: float64(h.min), Max: float64(h.max), Num: float64(h.num), Sum: float64(h.sum),
					SumSquares: float64(h.sum_squares), BucketLimit: make([]float64, n), Bucket: make([]float64, n)}
				if n > 0 {
					copy(value.Histogram.BucketLimit, unsafe.Slice((*float64)(unsafe.Pointer(h.bucket_limit)), n))
					copy(value.Histogram.Bucket, unsafe.Slice((*float64)(unsafe.Pointer(h.bucket)), n))
				}
			}
			event.Values = append(event.Values, value)
		}
	}
	return event, nil
}

// Close closes the file; closing twice is a no-op.
func (r *EventReader) Close() {
	if r == nil || r.c == nil {
		return
	}
	C.tw_event_reader_destroy(r.c)
	r.c = nil
	runtime.SetFinalizer(r, nil)
}
