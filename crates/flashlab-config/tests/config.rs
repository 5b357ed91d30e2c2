use flashlab_config::*;
use proptest::prelude::*;

mod mutations;

fn err(text: &str, sets: &[&str]) -> String {
    let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
    load(text, "my.toml", &sets).unwrap_err().to_string()
}

#[test]
fn empty_file_is_the_default() {
    let (raw, s) = load("", "x.toml", &[]).unwrap();
    assert_eq!(raw, RawConfig::default());
    assert_eq!(s.geometry.pages(), 2 * 1024 * 1024);
    assert_eq!(s.ftl.logical_pages, (2.0 * 1024.0 * 1024.0 * 0.8f64).floor() as u64);
    assert_eq!(s.timing.unwrap().erase_ns, 1_500_000);
    assert_eq!(s.timing.unwrap().byte_ps, 25_000);
}

#[test]
fn default_toml_round_trips() {
    let text = default_toml();
    let (raw, _) = load(&text, "default.toml", &[]).unwrap();
    assert_eq!(raw, RawConfig::default());
    for key in keys::known_keys() {
        assert!(text.contains(key.rsplit('.').next().unwrap()), "{key} missing from default");
    }
}

#[test]
fn unknown_key_names_line_and_nearest() {
    let e = err("[device]\nchannels = 2\n\n[gc]\nvictm = \"fifo\"\n", &[]);
    assert!(e.starts_with("my.toml:5: unknown key `gc.victm`; nearest valid: gc.victim, "), "{e}");
    let e = err("[devce]\nchannels = 2\n", &[]);
    assert!(e.starts_with("my.toml:2: unknown key `devce.channels`; nearest valid: device.channels"), "{e}");
}

#[test]
fn set_overrides_and_checks() {
    let sets = vec!["device.spare_factor=0.1".to_string(), "gc.victim=fifo".into(), "workload.pattern=\"zipf\"".into()];
    let (raw, s) = load("", "x", &sets).unwrap();
    assert_eq!(raw.device.spare_factor, 0.1);
    assert_eq!(s.ftl.victim, flashlab_ftl::VictimPolicy::Fifo);
    assert!(matches!(s.workload.source, Source::Synthetic(SyntheticSettings { pattern: Pattern::Zipf { .. }, .. })));
    let e = err("", &["device.spare_fator=0.1"]);
    assert!(e.starts_with("--set: unknown key `device.spare_fator`; nearest valid: device.spare_factor"), "{e}");
    let e = err("", &["device.channels=lots"]);
    assert!(e.starts_with("--set device.channels:") && e.contains("u32"), "{e}");
    assert!(err("", &["device.channels"]).contains("expected KEY=VALUE"));
}

#[test]
fn type_error_in_file_names_file_and_line() {
    let e = err("[device]\nchannels = \"four\"\n", &[]);
    assert_eq!(e, "my.toml:2: device.channels: invalid type: string \"four\", expected u32");
    let e = err("[device\n", &[]);
    assert!(e.starts_with("my.toml:1"), "{e}");
    assert!(!e.contains('\n'));
    assert_eq!(err("[gc]\ndt_big_a = nan\n", &[]), "gc.dt_big_a: NaN is not a finite number");
}

#[test]
fn impossible_geometry_says_why() {
    assert_eq!(err("", &["device.dies_per_chip=0"]), "device.dies_per_chip must be at least 1, got 0");
    let e = err("", &["device.spare_factor=0.001"]);
    assert!(
        e.contains("leaves 1 spare blocks per plane")
            && e.contains("gc.free_blocks_min + ftl.host_streams + ftl.gc_streams + 1 = 5"),
        "{e}"
    );
    assert!(err("", &["device.spare_factor=1.0"]).contains("expected 0 <= spare_factor < 1"));
    assert!(err("", &["device.page_bytes=1000"]).contains("multiple of 512"));
}

#[test]
fn bad_choices_list_valid_ones() {
    assert!(err("", &["gc.victim=best"]).contains("valid: greedy, fifo, random, d-choices, cost-benefit"));
    assert_eq!(
        err("", &["workload.pattern=zip"]),
        "workload.pattern = \"zip\": expected one of: uniform, hotcold, sequential, zipf"
    );
    assert!(err("", &["workload.kind=trace"]).contains("needs a trace file path"));
    assert!(err("", &["workload.read_fraction=1.5"]).contains("expected a fraction from 0 to 1"));
    assert!(err("", &["workload.arrival=fixed"]).contains("workload.interarrival_us"));
    assert!(err("", &["ftl.stripe_order=cwdd"]).contains("permutation"));
}

#[test]
fn request_size_in_pages() {
    let (_, s) =
        load("", "x", &["workload.request_bytes=4096".into(), "workload.request_bytes_max=9000".into()]).unwrap();
    match s.workload.source {
        Source::Synthetic(w) => assert_eq!((w.pages_min, w.pages_max), (2, 5)),
        _ => unreachable!(),
    }
}

proptest! {
    #[test]
    fn set_of_any_geometry_value_is_applied_or_rejected_cleanly(ch in 0u32..20, ppb in 0u32..300, sf in -0.5f64..1.5) {
        let sets = vec![format!("device.channels={ch}"), format!("device.pages_per_block={ppb}"), format!("device.spare_factor={sf}")];
        match load("", "x", &sets) {
            Ok((raw, s)) => {
                prop_assert_eq!(raw.device.channels, ch);
                prop_assert_eq!(s.geometry.pages_per_block, ppb);
            }
            Err(e) => prop_assert!(!e.to_string().contains('\n')),
        }
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = load(&text, "x", &[]);
    }
}

#[test]
fn timing_presets_fill_unset_keys_only() {
    let (raw, s) = load("[timing]\npreset = \"mlc\"\nread_us = 40\n", "x", &[]).unwrap();
    assert_eq!((raw.timing.read_us, raw.timing.program_us, raw.timing.erase_ms), (40.0, 900.0, 3.5));
    assert_eq!(s.timing.unwrap().program_ns, 900_000);
    let (_, s) = load("", "x", &["timing.preset=nandsim-seed000".into()]).unwrap();
    let t = s.timing.unwrap();
    assert_eq!((t.read_ns, t.program_ns, t.erase_ns, t.byte_ps), (25_000, 200_000, 2_000_000, 0));
    assert!(err("", &["timing.preset=qlc"]).contains("expected one of: custom, ssdsim, nandsim-seed000, slc, mlc, tlc"));
}

#[test]
fn gc_mode_validation() {
    let (_, s) = load("", "x", &["gc.mode=preemptible".into(), "gc.background_free_blocks=6".into()]).unwrap();
    assert_eq!(s.gc_mode, GcMode::Preemptible { background_free_blocks: 6 });
    assert!(
        err("", &["gc.mode=preemptible", "gc.background_free_blocks=2"]).contains("more than gc.free_blocks_min = 2")
    );
    assert!(err("", &["gc.mode=lazy"]).contains("blocking, preemptible"));
}

#[test]
fn gc_presets_fill_unset_keys() {
    let (raw, s) = load("[gc]\npreset = \"wpo-gc\"\n", "x", &[]).unwrap();
    assert_eq!(
        (raw.gc.victim.as_str(), raw.gc.trigger.as_str(), raw.gc.mode.as_str()),
        ("wpo", "dt-gc", "preemptible")
    );
    assert!(raw.placement.enabled && s.ftl.placement.is_some());
    assert_eq!(s.ftl.victim, flashlab_ftl::VictimPolicy::Wpo { k: 10.0 });
    assert!(matches!(s.ftl.trigger, flashlab_ftl::Trigger::DtGc(p) if p.e == 0.2 && p.a == 0.3));
    // An explicit key wins over the preset.
    let (raw, _) = load("[gc]\npreset = \"wpo-gc\"\nvictim = \"cat\"\n", "x", &[]).unwrap();
    assert_eq!(raw.gc.victim, "cat");
    let (raw, s) = load("", "x", &["gc.preset=ssdsim-basic".into()]).unwrap();
    assert_eq!((raw.gc.victim.as_str(), raw.gc.mode.as_str(), raw.ftl.gc_streams), ("greedy", "blocking", 2));
    assert_eq!(s.ftl.trigger, flashlab_ftl::Trigger::FreeRatio { min: 0.1 });
    let (_, s) = load("", "x", &["gc.preset=ssdsim-basic".into(), "gc.free_ratio_min=0.05".into()]).unwrap();
    assert_eq!(s.ftl.trigger, flashlab_ftl::Trigger::FreeRatio { min: 0.05 });
    assert!(err("", &["gc.trigger=free-ratio", "gc.free_ratio_min=1"]).contains("gc.free_ratio_min"));
    assert!(err("", &["gc.trigger=ratio"]).contains("threshold, dt-gc, free-ratio"));
    let (raw, s) = load("", "x", &["gc.preset=basic-gc".into()]).unwrap();
    assert_eq!((raw.ftl.gc_streams, raw.gc.mode.as_str()), (2, "blocking"));
    assert_eq!(s.gc_mode, GcMode::Blocking);
    assert!(err("", &["gc.preset=best-gc"]).contains("none, basic-gc, ssdsim-basic, dt-gc, wpo-gc"));
    assert!(err("", &["gc.victim=wpo", "gc.wpo_k=0"]).contains("gc.wpo_k"));
    assert!(err("", &["gc.trigger=dt-gc", "gc.dt_a=2"]).contains("gc.dt_a"));
}

#[test]
fn flashfs_campaign_section() {
    let (raw, s) = load("[flashfs]\nevery_k_ops = 7\n", "x", &[]).unwrap();
    assert_eq!(raw.flashfs.every_k_ops, 7);
    assert_eq!(raw.resolve_flashfs().unwrap().every_k_ops, 7);
    assert_eq!(s, raw.resolve().unwrap());
    let e = err("[flashfs]\nevery_k_op = 7\n", &[]);
    assert!(e.contains("my.toml:2: unknown key `flashfs.every_k_op`; nearest valid: flashfs.every_k_ops"), "{e}");
}

#[test]
fn mapping_keys_are_validated_with_one_line_errors() {
    let e = err("", &["ftl.mapping=\"hybrid\""]);
    assert!(e.contains("ftl.mapping") && e.contains("page, block, bast, bast-padding, fast"), "{e}");
    assert!(err("", &["ftl.mapping=\"bast\"", "ftl.log_blocks=0"]).starts_with("ftl.log_blocks = 0"));
    let e = err("", &["ftl.mapping=\"fast\"", "ftl.log_blocks=100000"]);
    assert!(e.starts_with("ftl.log_blocks = 100000") && e.contains("spare mapping units"), "{e}");
    assert!(err("", &["ftl.map_cache_entries=0"]).starts_with("ftl.map_cache_entries = 0"));
    assert!(err("", &["ftl.dftl_variant=\"x\""]).contains("paper, flashsim-c, flashsim-cpp, wiscsim"));
    assert!(err("", &["ftl.log_victim=\"oldest\""]).contains("lru, fifo, random"));
    let three_planes =
        ["device.channels=1", "device.chips_per_channel=1", "device.dies_per_chip=1", "device.planes_per_die=3"];
    let e = err("", &[&three_planes[..], &["ftl.mapping=\"bast\"", "ftl.superblock_blocks=2"]].concat());
    assert!(e.starts_with("ftl.superblock_blocks = 2") && e.contains("does not divide"), "{e}");
    assert!(err("", &["ftl.superblock_blocks=3"]).contains("expected 1, 2, 4 or 8"));
    let e = err("", &["ftl.mapping=\"fast\"", "ftl.fast_seq_log_blocks=64"]);
    assert!(e.starts_with("ftl.fast_seq_log_blocks = 64"), "{e}");
    for e in [err("", &["ftl.mapping=\"bast\"", "ftl.log_blocks=0"]), err("", &["ftl.map_cache_entries=0"])] {
        assert_eq!(e.lines().count(), 1);
    }
}

#[test]
fn settings_that_cannot_apply_warn_by_key() {
    let sets = |s: &[&str]| s.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let (raw, _) = load("", "x", &sets(&["ftl.mapping=\"bast\"", "gc.victim=\"fifo\""])).unwrap();
    assert_eq!(
        raw.warnings(),
        ["warning: gc.victim = \"fifo\" does not apply to ftl.mapping = \"bast\" and is ignored"]
    );
    let (raw, _) = load("", "x", &sets(&["ftl.log_blocks=8", "ftl.superblock_blocks=2"])).unwrap();
    let w = raw.warnings();
    assert!(w.len() == 2 && w[0].contains("ftl.log_blocks") && w[1].contains("ftl.superblock_blocks"), "{w:?}");
    // The default configuration with any mapping: no warning, and it resolves.
    for m in ["page", "block", "bast", "bast-padding", "fast"] {
        let text = default_toml().replace("mapping = \"page\"", &format!("mapping = \"{m}\""));
        let (raw, s) = load(&text, "default.toml", &[]).unwrap();
        assert!(raw.warnings().is_empty(), "{m}: {:?}", raw.warnings());
        assert_eq!(s.ftl.mapping.scheme.name(), m);
    }
}

#[test]
fn bus_arbitration_is_validated_and_defaults_to_fifo() {
    let t = |sets: &[&str]| {
        let sets: Vec<String> = sets.iter().map(|s| s.to_string()).collect();
        load("", "x", &sets).unwrap().1.timing.unwrap().bus_arbitration
    };
    assert_eq!(t(&[]), flashlab_config::BusArbitration::Fifo);
    assert_eq!(t(&["timing.bus_arbitration=host-first"]), flashlab_config::BusArbitration::HostFirst);
    assert!(flashlab_config::default_toml().contains("bus_arbitration = \"fifo\""));
    let e = err("[timing]\nbus_arbitration = \"host\"\n", &[]);
    assert!(e.contains("timing.bus_arbitration") && e.contains("expected one of: fifo, host-first"), "{e}");
}
