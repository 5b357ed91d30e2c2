//! Feed arbitrary text to the config parser and arbitrary `--set KEY=VALUE`
//! overrides on top of it.
//!
//! Run with `cargo +nightly fuzz run config` from the `fuzz` directory.
//! The input is split at NUL bytes: the first part is the config file, every
//! further part one `--set` argument. Checked invariants: no panic (parsing,
//! overrides, presets and validation included), every error renders on one
//! line, and a configuration that loads prints as TOML that loads to the same
//! raw configuration.

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let file = parts.next().unwrap_or("");
    let sets: Vec<String> = parts.take(8).map(str::to_string).collect();
    match flashlab_config::load(file, "fuzz.toml", &sets) {
        Ok((raw, _)) => {
            let printed = flashlab_config::to_toml(&raw);
            let (again, _) = flashlab_config::load(&printed, "printed.toml", &[]).expect("printed config loads");
            assert_eq!(again, raw);
        }
        Err(e) => assert!(!e.to_string().contains('\n'), "multi-line error: {e}"),
    }
});
