//! The collective seam (experimental): a job of two ranks in one process, talking through an engine
//! written in Rust (a rendezvous on a mutex), trains a tensor sharded across them, checkpoints it in
//! parts, and a single process restores the whole tensor (docs/tf-semantics.md D1–D12).
mod common;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use common::Scratch;
use trainwatch::experimental::{Collective, ReduceOp};
use trainwatch::{Code, Error, MonitoredTrainingSession, Opt, Options, Saver, StopAtStepHook};

/// Every rank deposits its bytes; the last one to arrive publishes all of them.
#[derive(Default)]
struct Hub {
    state: Mutex<HubState>,
    arrived: Condvar,
}

#[derive(Default)]
struct HubState {
    generation: u64,
    slots: Vec<Option<Vec<u8>>>,
    result: Vec<Vec<u8>>,
}

struct Rank {
    hub: Arc<Hub>,
    rank: i32,
    world_size: i32,
    allreduces: Arc<AtomicU32>,
}

impl Rank {
    fn exchange(&self, data: Vec<u8>, timeout_secs: f64) -> trainwatch::Result<Vec<Vec<u8>>> {
        let n = self.world_size as usize;
        let mut state = self.hub.state.lock().unwrap();
        state.slots.resize(n, None);
        state.slots[self.rank as usize] = Some(data);
        let generation = state.generation;
        if state.slots.iter().all(Option::is_some) {
            state.result = state.slots.iter_mut().map(|s| s.take().unwrap()).collect();
            state.generation += 1;
            self.hub.arrived.notify_all();
        } else {
            let limit = Duration::from_secs_f64(if timeout_secs < 0.0 { 60.0 } else { timeout_secs });
            let (next, wait) =
                self.hub.arrived.wait_timeout_while(state, limit, |s| s.generation == generation).unwrap();
            state = next;
            if wait.timed_out() {
                return Err(Error::new(Code::DeadlineExceeded, "a rank did not arrive"));
            }
        }
        Ok(state.result.clone())
    }
}

impl Collective for Rank {
    fn rank(&self) -> i32 {
        self.rank
    }
    fn world_size(&self) -> i32 {
        self.world_size
    }
    fn allreduce_i64(&mut self, values: &mut [i64], op: ReduceOp, timeout_secs: f64) -> trainwatch::Result<()> {
        self.allreduces.fetch_add(1, Ordering::SeqCst);
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        for (i, value) in values.iter_mut().enumerate() {
            let all = self.exchange_cached(&bytes, i, timeout_secs)?;
            *value = match op {
                ReduceOp::Sum => all.iter().sum(),
                ReduceOp::Min => *all.iter().min().unwrap(),
                ReduceOp::Max => *all.iter().max().unwrap(),
            };
        }
        Ok(())
    }
    fn broadcast(&mut self, data: &mut [u8], root: i32, timeout_secs: f64) -> trainwatch::Result<()> {
        let all = self.exchange(data.to_vec(), timeout_secs)?;
        data.copy_from_slice(&all[root as usize]);
        Ok(())
    }
    fn barrier(&mut self, timeout_secs: f64) -> trainwatch::Result<()> {
        self.exchange(Vec::new(), timeout_secs).map(drop)
    }
}

impl Rank {
    /// The i-th value of every rank (one exchange for the whole array, read per element).
    fn exchange_cached(&self, bytes: &[u8], i: usize, timeout_secs: f64) -> trainwatch::Result<Vec<i64>> {
        thread_local!(static LAST: std::cell::RefCell<Vec<Vec<u8>>> = std::cell::RefCell::new(Vec::new()));
        if i == 0 {
            let all = self.exchange(bytes.to_vec(), timeout_secs)?;
            LAST.with(|l| *l.borrow_mut() = all);
        }
        Ok(LAST
            .with(|l| l.borrow().iter().map(|b| i64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().unwrap())).collect()))
    }
}

#[test]
fn two_ranks_train_a_sharded_tensor_and_one_process_restores_it_whole() {
    let dir = Scratch::new("collective");
    let hub = Arc::new(Hub::default());
    let allreduces = Arc::new(AtomicU32::new(0));
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            let (hub, allreduces, dir) = (hub.clone(), allreduces.clone(), dir.0.clone());
            thread::spawn(move || -> trainwatch::Result<(i64, [f32; 2])> {
                let mut part = [0f32; 2]; // this rank's half of emb[4]
                let step = {
                    let mut opts = Options::new()?;
                    opts.shard("emb", &mut part, &[2], &[4], &[2 * rank as i64])?
                        .set_f64(Opt::CollectiveTimeoutSecs, 20.0)?
                        .set_collective(Rank { hub, rank, world_size: 2, allreduces })?;
                    let stop = StopAtStepHook::last_step(3)?;
                    let mut session = MonitoredTrainingSession::with_options(opts)
                        .checkpoint_dir(&dir)
                        .save_checkpoint_steps(Some(2))
                        .save_summaries_steps(None)
                        .log_step_count_steps(None)
                        .hook(&stop)
                        .create()?;
                    assert_eq!(session.is_chief(), rank == 0);
                    while !session.should_stop() {
                        session.run(&[], |ctx| {
                            ctx.variable_mut::<f32>("emb")?.iter_mut().for_each(|v| *v += (rank + 1) as f32);
                            Ok(())
                        })?;
                    }
                    let step = session.global_step();
                    session.close()?;
                    step
                };
                Ok((step, part))
            })
        })
        .collect();
    let results: Vec<_> = ranks.into_iter().map(|r| r.join().unwrap().unwrap()).collect();
    assert_eq!(results, [(3, [3.0, 3.0]), (3, [6.0, 6.0])]);
    assert!(allreduces.load(Ordering::SeqCst) >= 6, "every run of each rank ends with a vote (D4)");

    // One process, no collective: the whole tensor restored from both ranks' parts.
    let mut whole = [0f32; 4];
    {
        let mut opts = Options::new().unwrap();
        opts.shard("emb", &mut whole, &[4], &[4], &[0]).unwrap();
        let mut saver = Saver::from_options(&opts).unwrap();
        assert!(saver.restore_newest_good(&dir.0).unwrap().ends_with("model.ckpt-3"));
    }
    assert_eq!(whole, [3.0, 3.0, 6.0, 6.0]);
}
