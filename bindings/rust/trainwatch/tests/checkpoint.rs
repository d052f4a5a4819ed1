//! Saver and checkpoint reading outside a session, and sharded variables (a box that is the whole
//! global tensor, as one process holds it).
mod common;

use std::fs;
use std::sync::{Arc, Mutex};

use common::Scratch;
use trainwatch::checkpoint::{self, CheckpointVariable};
use trainwatch::{Code, DType, Options, Saver, Variable};

#[test]
fn saver_saves_keeps_max_to_keep_and_restores_in_place() {
    let dir = Scratch::new("saver");
    let prefix = dir.0.join("model.ckpt");
    let mut w = [1.5f32, -2.0, 3.25, 4.0];
    let mut step = [7i64];
    let saved = {
        let mut saver =
            Saver::new(vec![Variable::new("w", &mut w, &[2, 2]).unwrap(), Variable::new("s", &mut step, &[]).unwrap()])
                .unwrap();
        saver.set_max_to_keep(1).unwrap();
        saver.save(&prefix, Some(1)).unwrap();
        let saved = saver.save(&prefix, Some(2)).unwrap().unwrap();
        assert!(saved.ends_with("model.ckpt-2"));
        // C9: max_to_keep=1 evicts the older checkpoint.
        assert_eq!(saver.last_checkpoints().unwrap(), vec![saved.clone()]);
        assert!(!dir.0.join("model.ckpt-1").exists());
        saved
    };
    assert_eq!(trainwatch::latest_checkpoint(&dir.0).unwrap(), Some(saved.clone()));

    let mut listed = checkpoint::list_variables(&saved).unwrap();
    listed.sort_by(|a, b| a.name.cmp(&b.name));
    assert_eq!(
        listed,
        [
            CheckpointVariable { name: "s".into(), dtype: Some(DType::I64), shape: vec![] },
            CheckpointVariable { name: "w".into(), dtype: Some(DType::F32), shape: vec![2, 2] },
        ]
    );
    let loaded = checkpoint::load_variable(&saved, "w").unwrap();
    assert_eq!(loaded.as_slice::<f32>().unwrap(), &w);
    assert_eq!(loaded.shape(), &[2, 2]);
    assert_eq!(checkpoint::load_variable(&saved, "nope").unwrap_err().code(), Code::NotFound);
    checkpoint::verify(&saved).unwrap();

    let mut fresh = [0f32; 4];
    let mut fresh_step = [0i64];
    {
        let mut saver = Saver::new(vec![
            Variable::new("w", &mut fresh, &[2, 2]).unwrap(),
            Variable::new("s", &mut fresh_step, &[]).unwrap(),
        ])
        .unwrap();
        assert_eq!(saver.restore_newest_good(&dir.0).unwrap(), saved);
    }
    assert_eq!((fresh, fresh_step), (w, step));

    let mut only_w = [0f32; 4];
    let mut untouched = [42i64];
    {
        let mut saver = Saver::new(vec![
            Variable::new("w", &mut only_w, &[2, 2]).unwrap(),
            Variable::new("s", &mut untouched, &[]).unwrap(),
        ])
        .unwrap();
        saver.restore_variables(&saved, &["w"]).unwrap();
    }
    assert_eq!((only_w, untouched), (w, [42]));
}

#[test]
fn a_damaged_checkpoint_is_data_loss_and_restore_skips_it() {
    let dir = Scratch::new("damaged");
    let prefix = dir.0.join("model.ckpt");
    let mut w = [1f32; 8];
    let (good, bad) = {
        let mut saver = Saver::new(vec![Variable::new("w", &mut w, &[8]).unwrap()]).unwrap();
        let good = saver.save(&prefix, Some(1)).unwrap().unwrap();
        let bad = saver.save(&prefix, Some(2)).unwrap().unwrap();
        (good, bad)
    };
    let mut bytes = fs::read(&bad).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 0xff;
    fs::write(&bad, bytes).unwrap();
    assert_eq!(checkpoint::verify(&bad).unwrap_err().code(), Code::DataLoss);
    let mut fresh = [0f32; 8];
    let mut saver = Saver::new(vec![Variable::new("w", &mut fresh, &[8]).unwrap()]).unwrap();
    trainwatch::set_log_level(trainwatch::LogLevel::Error); // the skip is logged as a warning
    assert_eq!(saver.restore_newest_good(&dir.0).unwrap(), good, "C20: the newest good one");
    trainwatch::set_log_level(trainwatch::LogLevel::Info);
}

#[test]
fn saver_from_options_saves_a_shard_and_reports_progress() {
    let dir = Scratch::new("shard");
    let reports = Arc::new(Mutex::new(Vec::new()));
    let seen = reports.clone();
    checkpoint::set_progress_sink(0.0, Some(move |p: &checkpoint::Progress| seen.lock().unwrap().push(p.clone())))
        .unwrap();
    let mut box_ = [1f32, 2.0, 3.0, 4.0, 5.0, 6.0];
    let saved = {
        let mut opts = Options::new().unwrap();
        opts.shard("emb", &mut box_, &[3, 2], &[3, 2], &[0, 0]).unwrap();
        let mut saver = Saver::from_options(&opts).unwrap();
        saver.save(dir.0.join("model.ckpt"), Some(3)).unwrap().unwrap()
    };
    checkpoint::set_progress_sink(0.0, None::<fn(&checkpoint::Progress)>).unwrap();
    assert_eq!(checkpoint::load_variable(&saved, "emb").unwrap().as_slice::<f32>().unwrap(), &box_);
    let reports = reports.lock().unwrap();
    assert!(reports.iter().any(|p| p.save && p.finished && p.path == saved), "{:?}", reports);

    let mut w = [0f32; 6];
    let mut opts = Options::new().unwrap();
    assert_eq!(
        opts.shard("emb", &mut w, &[3, 2], &[3, 2], &[1, 0]).unwrap_err().code(),
        Code::InvalidArgument,
        "a box outside its global tensor"
    );
}
