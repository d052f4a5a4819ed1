package trainwatch_test

// A job of two ranks in one process, each rank's session on its own goroutine, talking through a
// collective written in Go: the seam a Go program uses to bring its own engine (D1–D17).

import (
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	tw "trainwatch.dev/trainwatch"
)

// memoryWorld is an in-process engine: every operation is an exchange in which each rank puts its
// part and waits for every other rank's.
type memoryWorld struct {
	size    int
	mu      sync.Mutex
	cond    *sync.Cond
	round   int
	arrived int
	parts   [][]byte
	done    [][]byte // the parts of the last complete round
}

func newMemoryWorld(size int) *memoryWorld {
	w := &memoryWorld{size: size, parts: make([][]byte, size)}
	w.cond = sync.NewCond(&w.mu)
	return w
}

// exchange returns every rank's part of this round. A finished round's parts stay in done until
// every rank has read them: the next round cannot complete before each rank has joined it.
func (w *memoryWorld) exchange(rank int, part []byte) [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	round := w.round
	w.parts[rank] = append([]byte(nil), part...)
	w.arrived++
	if w.arrived == w.size {
		w.done, w.parts = w.parts, make([][]byte, w.size)
		w.arrived = 0
		w.round++
		w.cond.Broadcast()
	}
	for w.round == round {
		w.cond.Wait()
	}
	return w.done
}

type memoryRank struct {
	world *memoryWorld
	rank  int
}

func (r memoryRank) Rank() int      { return r.rank }
func (r memoryRank) WorldSize() int { return r.world.size }

func (r memoryRank) AllreduceInt64(values []int64, op tw.ReduceOp, _ float64) error {
	part := make([]byte, 8*len(values))
	for i, v := range values {
		for b := 0; b < 8; b++ {
			part[8*i+b] = byte(uint64(v) >> (8 * b))
		}
	}
	for rank, bytes := range r.world.exchange(r.rank, part) {
		for i := range values {
			var v int64
			for b := 0; b < 8; b++ {
				v |= int64(bytes[8*i+b]) << (8 * b)
			}
			switch {
			case rank == 0:
				values[i] = v
			case op == tw.ReduceSum:
				values[i] += v
			case op == tw.ReduceMin && v < values[i], op == tw.ReduceMax && v > values[i]:
				values[i] = v
			}
		}
	}
	return nil
}

func (r memoryRank) Broadcast(data []byte, root int, _ float64) error {
	copy(data, r.world.exchange(r.rank, data)[root])
	return nil
}

func (r memoryRank) Barrier(float64) error {
	r.world.exchange(r.rank, nil)
	return nil
}

// D17: two ranks each train their half of w under MonitoredTrainingSession; every rank writes its
// part of each checkpoint, and one process restores the whole tensor from it.
func TestTwoRanksInOneProcessThroughAGoCollective(t *testing.T) {
	quiet(t)
	dir := t.TempDir()
	world := newMemoryWorld(2)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for rank := 0; rank < 2; rank++ {
		wg.Add(1)
		go func(rank int) {
			defer wg.Done()
			errs[rank] = trainRank(dir, memoryRank{world: world, rank: rank})
		}(rank)
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			t.Fatalf("rank %d: %v", rank, err)
		}
	}
	latest, err := tw.LatestCheckpoint(dir)
	must(t, err)
	if filepath.Base(latest) != "model.ckpt-3" {
		t.Errorf("latest %q, want model.ckpt-3", latest)
	}
	whole, err := tw.LoadVariable(latest, "w")
	must(t, err)
	values, _ := tw.Values[float32](whole)
	if want := []float32{3, 3, 6, 6}; !reflect.DeepEqual(values, want) {
		t.Errorf("the sharded checkpoint holds w=%v, want %v (rank r adds r+1 to its half, 3 steps)", values, want)
	}
}

func trainRank(dir string, engine memoryRank) error {
	half, err := tw.NewTensor("w", tw.Float32, 2)
	if err != nil {
		return err
	}
	opts, err := tw.NewOptions()
	if err != nil {
		return err
	}
	defer opts.Close()
	if err := opts.AddShard(half, []int64{4}, []int64{int64(2 * engine.rank)}); err != nil {
		return err
	}
	if err := opts.SetCollective(engine); err != nil {
		return err
	}
	stop, err := tw.StopAtStepHook(tw.Unset, 3)
	if err != nil {
		return err
	}
	defer stop.Close()
	s, err := tw.NewMonitoredTrainingSession(tw.UseOptions(opts), tw.CheckpointDir(dir), tw.SaveCheckpointSteps(2),
		tw.SaveSummariesSteps(0), tw.LogStepCountSteps(0), tw.Hooks(stop))
	if err != nil {
		return err
	}
	for !s.ShouldStop() {
		err := s.Run(func(ctx *tw.StepContext) error {
			view, err := ctx.Variable("w")
			if err != nil {
				return err
			}
			w, err := tw.Values[float32](view)
			for i := range w {
				w[i] += float32(engine.rank + 1)
			}
			return err
		})
		if err != nil {
			s.Close()
			return err
		}
	}
	return s.Close()
}
