//! A deterministic, stable-toolchain counterpart of the `config` fuzz target
//! (`fuzz/fuzz_targets/config.rs`): mutated config files and `--set` arguments must
//! load or fail with a one-line error, never panic, and whatever loads must print
//! as TOML that loads back to the same raw configuration.

use flashlab_config::{default_toml, load, to_toml};

/// xorshift64*: a fixed sequence, so the test is reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const TOKENS: &[&str] = &[
    "=",
    "[",
    "]",
    "\"",
    "{",
    "}",
    ",",
    ".",
    "\n",
    "-1",
    "0",
    "1e300",
    "9223372036854775807",
    "true",
    "\"x\"",
    "[[hotness.identifiers]]",
    "kind = \"multi-hash\"",
    "nan",
    "inf",
    "[device]",
    "channels",
    "65536",
];

fn mutate(rng: &mut Rng, text: &mut String) {
    for _ in 0..1 + rng.below(4) {
        let mut at = rng.below(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        match rng.below(3) {
            0 => text.insert_str(at, TOKENS[rng.below(TOKENS.len())]),
            1 => {
                let mut end = (at + 1 + rng.below(8)).min(text.len());
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                text.replace_range(at..end, "");
            }
            _ => text.insert(at, (b' ' + rng.below(95) as u8) as char),
        }
    }
}

fn check(text: &str, sets: &[String]) -> bool {
    match load(text, "m.toml", sets) {
        Ok((raw, _)) => {
            let (again, _) = load(&to_toml(&raw), "printed.toml", &[]).expect("printed config loads");
            assert_eq!(again, raw);
            true
        }
        Err(e) => {
            assert!(!e.to_string().contains('\n'), "multi-line error for {sets:?}: {e}");
            false
        }
    }
}

#[test]
fn mutated_configs_and_sets_never_panic() {
    let seeds = [
        default_toml(),
        "[workload]\nkind = \"trace\"\ntrace_path = \"t.ascii\"\n".to_string(),
        "[placement]\nenabled = true\nidentifier = { kind = \"two-level-lru\", hot_entries = 8 }\n".to_string(),
        "[gc]\npreset = \"wpo-gc\"\n[timing]\npreset = \"tlc\"\n".to_string(),
    ];
    let keys = flashlab_config::keys::known_keys();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut loaded = 0;
    for i in 0..1500 {
        let mut text = seeds[i % seeds.len()].clone();
        mutate(&mut rng, &mut text);
        let mut set = format!("{}={}", keys[rng.below(keys.len())], TOKENS[rng.below(TOKENS.len())]);
        if rng.below(4) == 0 {
            mutate(&mut rng, &mut set);
        }
        loaded += check(&text, &[]) as u32;
        loaded += check(&seeds[i % seeds.len()], &[set]) as u32;
    }
    assert!(loaded > 50, "mutations should keep some inputs valid ({loaded})");
}
