//! Integration tests of flashlab-trace: inline fixtures for every format,
//! error reporting, round trips (proptest), garbage robustness, a
//! deterministic mutation fuzz loop, and counts on the real traces in
//! `../shared/traces` (skipped when that directory is absent).

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::PathBuf;

use flashlab_trace::{
    detect, stats, write_header, write_request, FioTimeUnit, FormatChoice, Op, ReaderOptions, Request, TraceError,
    TraceFormat, TraceReader, TraceStats, TraceWriter,
};
use proptest::prelude::*;

// ---------------------------------------------------------------- helpers

fn opts(name: &str) -> ReaderOptions {
    ReaderOptions::named(name)
}

fn read_all(format: TraceFormat, text: &[u8]) -> Vec<Request> {
    TraceReader::new(text, format, opts("fixture"))
        .collect::<Result<Vec<_>, _>>()
        .unwrap_or_else(|e| panic!("{format}: {e}"))
}

fn req(time_ns: u64, op: Op, offset_bytes: u64, len_bytes: u64, device: u32) -> Request {
    Request { time_ns, op, offset_bytes, len_bytes, device }
}

fn first_error(format: TraceFormat, name: &str, text: &[u8]) -> TraceError {
    let mut reader = TraceReader::new(text, format, opts(name));
    let err = reader.by_ref().find_map(Result::err).expect("expected an error");
    assert!(reader.next().is_none(), "iteration must stop after an error");
    err
}

fn auto(text: &[u8]) -> Result<TraceFormat, TraceError> {
    TraceReader::with_auto_detect(text, opts("auto")).map(|r| r.format())
}

// ---------------------------------------------------------------- fixtures

#[test]
fn ssdsim_fixture() {
    let text = b"0 0 303567 7 0\n78643005 1 55596 6 1\n";
    assert_eq!(
        read_all(TraceFormat::Ssdsim, text),
        vec![req(0, Op::Write, 303_567 * 512, 7 * 512, 0), req(78_643_005, Op::Read, 55_596 * 512, 6 * 512, 1),]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::Ssdsim);
}

#[test]
fn mqsim_fixture_same_op_codes_as_ssdsim() {
    let text = b"938513000 4 264719034 16 0\n11565000 1 31244784 64 1\n";
    let expected = vec![
        req(938_513_000, Op::Write, 264_719_034 * 512, 16 * 512, 4),
        req(11_565_000, Op::Read, 31_244_784 * 512, 64 * 512, 1),
    ];
    assert_eq!(read_all(TraceFormat::Mqsim, text), expected);
    // Both simulators use 1 = read, 0 = write, so the formats read identically
    // and auto detection reports the first of them, ssdsim.
    assert_eq!(read_all(TraceFormat::Ssdsim, text), expected);
    assert_eq!(auto(text).unwrap(), TraceFormat::Ssdsim);
}

#[test]
fn ssdsim_fin_fixture() {
    let text = b"0\t0\t0\t0\tWrite\t303552\t32\t1\n4\t78643000\t2\t1\tRead\t55584\t32\t1\n";
    assert_eq!(
        read_all(TraceFormat::SsdsimFin, text),
        vec![req(0, Op::Write, 303_552 * 512, 32 * 512, 0), req(78_643_000, Op::Read, 55_584 * 512, 32 * 512, 2),]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::SsdsimFin);
}

#[test]
fn msr_fixture() {
    let text = b"128166372003061629,hm,1,Read,3154403328,32768,1409\n\
                 128166372016382155,hm,1,write,3154444288,4096,20035\n";
    assert_eq!(
        read_all(TraceFormat::Msr, text),
        vec![
            req(12_816_637_200_306_162_900, Op::Read, 3_154_403_328, 32_768, 1),
            req(12_816_637_201_638_215_500, Op::Write, 3_154_444_288, 4096, 1),
        ]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::Msr);
}

#[test]
fn spc_fixture() {
    let text = b"0,303567,3584,w,0.000000\n1,55596,3072,R,0.078643\n2,8,512,W,12.5,extra\n";
    assert_eq!(
        read_all(TraceFormat::Spc, text),
        vec![
            req(0, Op::Write, 303_567 * 512, 3584, 0),
            req(78_643_000, Op::Read, 55_596 * 512, 3072, 1),
            req(12_500_000_000, Op::Write, 4096, 512, 2),
        ]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::Spc);
}

const BLKPARSE: &str = "\
  8,0    3        1     0.000000000  1234  Q   W 223490 + 8 [kjournald]
  8,0    3        2     0.000001000  1234  G   W 223490 + 8 [kjournald]
  8,0    3        3     0.000002000  1234  D   W 223490 + 8 [kjournald]
  8,0    3        4     0.000150000     0  C   W 223490 + 8 [0]
  8,16   1        1     1.250000000  4321  D  RA 100 + 16 [cat]
  8,16   1        2     1.500000000  4321  D  DS 4096 + 2048 [fstrim]
  8,0    0        5     2.000000000   999  D  FN [kworker/0:1]
CPU0 (8,0):
 Reads Queued:           0,        0KiB\t Writes Queued:           1,        4KiB
Total (8,0):
 Throughput (R/W): 0KiB/s / 0KiB/s
";

#[test]
fn blkparse_fixture() {
    let dev_a = 8 << 20;
    let dev_b = (8 << 20) | 16;
    assert_eq!(
        read_all(TraceFormat::Blkparse, BLKPARSE.as_bytes()),
        vec![
            req(2_000, Op::Write, 223_490 * 512, 4096, dev_a),
            req(1_250_000_000, Op::Read, 100 * 512, 16 * 512, dev_b),
            req(1_500_000_000, Op::Trim, 4096 * 512, 2048 * 512, dev_b),
        ]
    );
    assert_eq!(auto(BLKPARSE.as_bytes()).unwrap(), TraceFormat::Blkparse);
    let queued = ReaderOptions { blkparse_action: 'Q', ..opts("q") };
    let q: Vec<_> =
        TraceReader::new(BLKPARSE.as_bytes(), TraceFormat::Blkparse, queued).collect::<Result<_, _>>().unwrap();
    assert_eq!(q, vec![req(0, Op::Write, 223_490 * 512, 4096, dev_a)]);
}

#[test]
fn fiu_fixture() {
    let text = b"89966527394865 4475 nfsd 103376072 8 W 6 0 a7d8c1e1c5e9fb1\n\
                 89966527400000 4475 nfsd 7 16 R 6 1 00ff\n";
    assert_eq!(
        read_all(TraceFormat::Fiu, text),
        vec![
            req(89_966_527_394_865, Op::Write, 103_376_072 * 512, 4096, 6 << 20),
            req(89_966_527_400_000, Op::Read, 7 * 512, 16 * 512, (6 << 20) | 1),
        ]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::Fiu);
}

#[test]
fn fio_v2_fixture() {
    let text = b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n\
                 /dev/sdb write 4096 8192\n/dev/sdb sync 0 0\n/dev/sdc trim 65536 1048576\n/dev/sdb close\n";
    assert_eq!(
        read_all(TraceFormat::FioIolog, text),
        vec![req(0, Op::Read, 0, 4096, 0), req(0, Op::Write, 4096, 8192, 0), req(0, Op::Trim, 65_536, 1_048_576, 1),]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::FioIolog);
}

#[test]
fn fio_v3_fixture_and_time_unit() {
    let text = b"fio version 3 iolog\n2 Nvme1n1 add\n872 Nvme1n1 open\n878 Nvme1n1 write 0 16384\n\
                 10001677 Nvme1n1 read 16384 4096\n10001700 Nvme1n1 close\n";
    assert_eq!(
        read_all(TraceFormat::FioIolog, text),
        vec![req(878_000, Op::Write, 0, 16_384, 0), req(10_001_677_000, Op::Read, 16_384, 4096, 0),]
    );
    let ms = ReaderOptions { fio_time_unit: FioTimeUnit::Milliseconds, ..opts("ms") };
    let first = TraceReader::new(&text[..], TraceFormat::FioIolog, ms).next().unwrap().unwrap();
    assert_eq!(first.time_ns, 878_000_000);
    assert_eq!(auto(text).unwrap(), TraceFormat::FioIolog);
}

#[test]
fn cloudphysics_fixture() {
    let text = b"version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633899,28,4096,8\n\
                 1,5633900,35,0,0\n1,5633901,42,1048576,2048\n1,5633902,A8,512,1\n";
    assert_eq!(
        read_all(TraceFormat::Cloudphysics, text),
        vec![
            req(5_633_898_000_000_000, Op::Write, 42_932_745 * 512, 512, 0),
            req(5_633_899_000_000_000, Op::Read, 4096, 4096, 0),
            req(5_633_901_000_000_000, Op::Trim, 2048 * 512, 1_048_576, 0),
            req(5_633_902_000_000_000, Op::Read, 512, 512, 0),
        ]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::Cloudphysics);
}

#[test]
fn wiscsee_fixture() {
    let text = b"39949 D read 299008 4096 0.000000000 0 False\n\
                 0 C read 299008 4096 0.000122793 0.000122793 False\n\
                 1446 D write 136314880 4096 0.437444011 2.8108e-05 True\n\
                 1386 D discard 136314880 8192 0.439239477 4.43e-06 False\n";
    assert_eq!(
        read_all(TraceFormat::Wiscsee, text),
        vec![
            req(0, Op::Read, 299_008, 4096, 0),
            req(437_444_011, Op::Write, 136_314_880, 4096, 0),
            req(439_239_477, Op::Trim, 136_314_880, 8192, 0),
        ]
    );
    assert_eq!(auto(text).unwrap(), TraceFormat::Wiscsee);
}

#[test]
fn csv_fixture_all_column_variants() {
    let bytes = b"time_ns,op,offset_bytes,len_bytes,device\n5,read,0,4096,1\n6,W,512,512,0\n7,trim,0,1048576,2\n";
    assert_eq!(
        read_all(TraceFormat::Csv, bytes),
        vec![req(5, Op::Read, 0, 4096, 1), req(6, Op::Write, 512, 512, 0), req(7, Op::Trim, 0, 1_048_576, 2),]
    );
    assert_eq!(auto(bytes).unwrap(), TraceFormat::Csv);
    let sectors = b"note,LBA_SECTORS,len_sectors,op,time_us\nx,8,2,r,1500\n";
    assert_eq!(read_all(TraceFormat::Csv, sectors), vec![req(1_500_000, Op::Read, 4096, 1024, 0)]);
    let secs = b"offset_sectors,len_bytes,op,time_s\n1,100,t,0.5\n";
    assert_eq!(read_all(TraceFormat::Csv, secs), vec![req(500_000_000, Op::Trim, 512, 100, 0)]);
    let no_time = b"op,offset_bytes,len_bytes\nwrite,1,2\n";
    assert_eq!(read_all(TraceFormat::Csv, no_time), vec![req(0, Op::Write, 1, 2, 0)]);
}

// ------------------------------------------------------- line handling

#[test]
fn blank_comment_crlf_bom_and_missing_final_newline() {
    let text = b"\xEF\xBB\xBF# header comment\r\n\r\n0 0 1 1 0\r\n   \n  # indented comment\n\t\n5 0 2 1 1";
    let reqs = read_all(TraceFormat::Ssdsim, text);
    assert_eq!(reqs, vec![req(0, Op::Write, 512, 512, 0), req(5, Op::Read, 1024, 512, 0)]);
    let mut reader = TraceReader::new(&text[..], TraceFormat::Ssdsim, opts("x"));
    assert_eq!(reader.by_ref().count(), 2);
    assert_eq!(reader.line_number(), 7);
    assert_eq!(reader.skipped_lines(), 0);
    assert_eq!(auto(text).unwrap(), TraceFormat::Ssdsim);
}

#[test]
fn empty_input_yields_nothing() {
    for &format in TraceFormat::ALL {
        assert!(read_all(format, b"").is_empty());
        assert!(read_all(format, b"\n\n# c\n").is_empty());
    }
}

// ---------------------------------------------------------------- errors

#[test]
fn bad_field_names_source_line_field_and_text() {
    let err = first_error(
        TraceFormat::Csv,
        "trace.csv",
        b"time_ns,op,offset_bytes,len_bytes\n1,read,0,8\n2,write,0,12x\n3,read,0,1\n",
    );
    assert_eq!(
        err.to_string(),
        "trace.csv:3: field `len_bytes` (column 4): expected an unsigned integer, found \"12x\""
    );
    assert_eq!(err.line(), Some(3));
    let err = first_error(TraceFormat::Ssdsim, "example.ascii", b"0 0 1 8 0\n\n0 0 1 8 7\n");
    assert_eq!(err.to_string(), "example.ascii:3: field `op` (column 5): expected 1 (read) or 0 (write), found \"7\"");
    let err = first_error(TraceFormat::Msr, "msr.csv", b"1,h,0,Read,0,512,1\n1,h,0,Flush,0,512,1\n");
    assert!(
        err.to_string().starts_with("msr.csv:2: field `Type` (column 4): expected Read or Write, found \"Flush\""),
        "{err}"
    );
}

#[test]
fn whole_line_errors() {
    let err = first_error(TraceFormat::Mqsim, "t.trace", b"1 2 3\n");
    let s = err.to_string();
    assert!(s.starts_with("t.trace:1: expected at least 5 whitespace-separated fields"), "{s}");
    assert!(s.contains("found 3") && s.contains("\"1 2 3\""), "{s}");
    assert!(!s.contains('\n'));
}

#[test]
fn overflow_and_zero_length_are_bad_lines() {
    // 36028797018963967 sectors = 2^64 - 512 bytes: the start fits, the end does not.
    let err = first_error(TraceFormat::Ssdsim, "o", b"0 0 36028797018963967 2 0\n");
    assert!(matches!(&err, TraceError::Field { field: "sectors", .. }), "{err}");
    let err = first_error(TraceFormat::Ssdsim, "o", b"0 0 36028797018963968 1 0\n");
    assert!(matches!(&err, TraceError::Field { field: "lsn", .. }), "{err}");
    let err = first_error(TraceFormat::Ssdsim, "o", b"99999999999999999999999 0 1 1 0\n");
    assert!(matches!(&err, TraceError::Field { field: "time_ns", .. }), "{err}");
    let err = first_error(TraceFormat::Csv, "o", b"op,offset_bytes,len_bytes\nr,18446744073709551615,1\n");
    assert!(matches!(&err, TraceError::Field { field: "len_bytes", .. }), "{err}");
    let err = first_error(TraceFormat::Spc, "o", b"0,1,0,r,0.1\n");
    assert!(err.to_string().contains("expected a length greater than 0"), "{err}");
    let err = first_error(TraceFormat::Msr, "o", b"184467440737095517,h,0,Read,0,1,0\n");
    assert!(matches!(&err, TraceError::Field { field: "Timestamp", .. }), "{err}");
}

#[test]
fn non_utf8_is_a_bad_line_not_a_panic() {
    let err = first_error(TraceFormat::Ssdsim, "bin", b"0 0 \xff\xfe 8 0\n");
    assert_eq!(
        err.to_string(),
        "bin:1: field `lsn` (column 3): expected an unsigned integer, found \"\u{fffd}\u{fffd}\""
    );
    // Non-UTF-8 in an ignored column is fine.
    let reqs = read_all(TraceFormat::Msr, b"1,h\xffst,0,Read,0,512,1\n");
    assert_eq!(reqs.len(), 1);
}

#[test]
fn skip_bad_lines_counts_them() {
    let text = b"0 0 1 8 0\nbad line\n0 0 x 8 0\n\n# ok\n5 0 1 8 1\n0 0 1 0 0\n7 0 1 8 1";
    let skip = ReaderOptions { skip_bad_lines: true, ..opts("s") };
    let mut reader = TraceReader::new(&text[..], TraceFormat::Ssdsim, skip.clone());
    let reqs: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reader.skipped_lines(), 3);
    assert_eq!(reader.line_number(), 8);
    let s = stats(TraceReader::new(&text[..], TraceFormat::Ssdsim, skip)).unwrap();
    assert_eq!((s.requests, s.skipped_lines), (3, 3));
    // Without skipping the first bad line (line 2) ends the stream.
    let mut strict = TraceReader::new(&text[..], TraceFormat::Ssdsim, opts("s"));
    assert!(strict.next().unwrap().is_ok());
    assert_eq!(strict.next().unwrap().unwrap_err().line(), Some(2));
    assert!(strict.next().is_none());
    assert!(stats(TraceReader::new(&text[..], TraceFormat::Ssdsim, opts("s"))).is_err());
}

#[test]
fn bad_csv_header_is_fatal_even_when_skipping() {
    let skip = ReaderOptions { skip_bad_lines: true, ..opts("h.csv") };
    let mut reader = TraceReader::new(&b"a,b,c\nread,0,1\n"[..], TraceFormat::Csv, skip);
    let err = reader.next().unwrap().unwrap_err();
    assert!(err.to_string().starts_with("h.csv:1: CSV header must name the columns `op`"), "{err}");
    assert!(reader.next().is_none());
}

#[test]
fn over_long_line_is_bad_and_skippable() {
    let mut text = b"0 0 1 8 0\n".to_vec();
    text.extend(std::iter::repeat_n(b'9', flashlab_trace::MAX_LINE_BYTES + 1));
    text.extend_from_slice(b"\n1 0 1 8 1\n");
    let err = first_error(TraceFormat::Ssdsim, "long", &text);
    assert!(err.to_string().starts_with("long:2: line longer than"), "{err}");
    let skip = ReaderOptions { skip_bad_lines: true, ..opts("long") };
    let mut reader = TraceReader::new(&text[..], TraceFormat::Ssdsim, skip);
    assert_eq!(reader.by_ref().filter(Result::is_ok).count(), 2);
    assert_eq!(reader.skipped_lines(), 1);
}

#[test]
fn io_errors_are_reported() {
    struct Failing;
    impl Read for Failing {
        fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
            Err(std::io::Error::other("disk on fire"))
        }
    }
    let mut reader = TraceReader::new(BufReader::new(Failing), TraceFormat::Csv, opts("f"));
    let err = reader.next().unwrap().unwrap_err();
    assert!(matches!(err, TraceError::Io { .. }));
    assert_eq!(err.to_string(), "f: read error after line 0: disk on fire");
    assert!(reader.next().is_none());
    assert!(TraceReader::with_auto_detect(BufReader::new(Failing), opts("f")).is_err());
}

#[test]
fn format_names_and_choice() {
    assert_eq!(TraceFormat::from_name("fio-iolog").unwrap(), TraceFormat::FioIolog);
    assert_eq!(TraceFormat::from_name("ssdsim-fin").unwrap(), TraceFormat::SsdsimFin);
    let e = TraceFormat::from_name("dismon").unwrap_err().to_string();
    assert_eq!(
        e,
        "unknown trace format \"dismon\"; valid formats: ssdsim, mqsim, msr, spc, blkparse, fiu, \
         fio-iolog, cloudphysics, wiscsee, csv, ssdsim-fin, disksim, diskmon"
    );
    assert_eq!(FormatChoice::from_name("auto").unwrap(), FormatChoice::Auto);
    let r = TraceReader::with_choice(&b"0 0 1 1 1\n"[..], FormatChoice::Fixed(TraceFormat::Mqsim), opts("c")).unwrap();
    assert_eq!(r.format(), TraceFormat::Mqsim);
}

#[test]
fn detection_errors() {
    let e = auto(b"hello world\nthis is not a trace\n").unwrap_err();
    assert!(matches!(e, TraceError::Undetectable { .. }));
    assert!(e.to_string().starts_with("auto: cannot detect the trace format: no format accepts"), "{e}");
    let e = auto(b"\n# nothing\n").unwrap_err();
    assert!(e.to_string().contains("the input has no data lines"), "{e}");
    assert!(detect(&[]).is_err());
    assert_eq!(detect(&["fio version 2 iolog"]).unwrap(), TraceFormat::FioIolog);
}

#[test]
fn auto_detection_replays_sampled_lines() {
    let mut text = String::from("# comment\n\n");
    for i in 0..200u64 {
        text.push_str(&format!("{},{},4096,{},{}.5\n", i % 3, i * 8, if i % 2 == 0 { 'r' } else { 'w' }, i));
    }
    let mut reader = TraceReader::with_auto_detect(text.as_bytes(), opts("spc")).unwrap();
    assert_eq!(reader.format(), TraceFormat::Spc);
    let reqs: Vec<_> = reader.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(reqs.len(), 200);
    assert_eq!(reqs[0], req(500_000_000, Op::Read, 0, 4096, 0));
    assert_eq!(reqs[199].offset_bytes, 199 * 8 * 512);
    assert_eq!(reader.line_number(), 202);
    // An error in a replayed line still reports the right line number.
    let bad = "0 0 1 1 0\n0 0 1 1 0\n# c\n".to_string() + "0 0 1 1 0\n".repeat(100).as_str() + "x\n";
    let e = TraceReader::with_auto_detect(bad.as_bytes(), opts("b")).unwrap().find_map(Result::err).unwrap();
    assert_eq!(e.line(), Some(104));
}

#[test]
fn stats_json_keys_and_values() {
    let text = b"time_ns,op,offset_bytes,len_bytes\n1000000000,read,4096,4096\n3000000000,write,0,512\n2000000000,trim,100,5\n";
    let s = stats(TraceReader::new(&text[..], TraceFormat::Csv, opts("s"))).unwrap();
    let expected = TraceStats {
        format: "csv".into(),
        requests: 3,
        reads: 1,
        writes: 1,
        trims: 1,
        bytes_read: 4096,
        bytes_written: 512,
        first_time_s: Some(1.0),
        last_time_s: Some(2.0),
        min_offset_bytes: Some(0),
        max_end_bytes: Some(8192),
        skipped_lines: 0,
    };
    assert_eq!(s, expected);
    let json = serde_json::to_value(&s).unwrap();
    let mut keys: Vec<&str> = json.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "bytes_read",
            "bytes_written",
            "first_time_s",
            "format",
            "last_time_s",
            "max_end_bytes",
            "min_offset_bytes",
            "reads",
            "requests",
            "skipped_lines",
            "trims",
            "writes"
        ]
    );
    let empty = stats(TraceReader::new(&b""[..], TraceFormat::Ssdsim, opts("e"))).unwrap();
    assert_eq!(empty.first_time_s, None);
    assert_eq!(serde_json::to_value(&empty).unwrap()["max_end_bytes"], serde_json::Value::Null);
}

// ---------------------------------------------------------------- writers

#[test]
fn writers_produce_expected_lines() {
    let r = req(1_500_000_000, Op::Write, 4096, 8192, 3);
    let line = |format| {
        let mut out = Vec::new();
        write_request(&mut out, format, &r).unwrap();
        String::from_utf8(out).unwrap()
    };
    assert_eq!(line(TraceFormat::Ssdsim), "1500000000 3 8 16 0\n");
    assert_eq!(line(TraceFormat::Mqsim), "1500000000 3 8 16 0\n");
    assert_eq!(line(TraceFormat::Msr), "15000000,flashlab,3,Write,4096,8192,0\n");
    assert_eq!(line(TraceFormat::Spc), "3,8,8192,w,1.500000000\n");
    assert_eq!(line(TraceFormat::Csv), "1500000000,write,4096,8192,3\n");
    assert_eq!(line(TraceFormat::Cloudphysics), "1,1.500000000,2a,8192,8\n");
    assert_eq!(line(TraceFormat::Wiscsee), "0 D write 4096 8192 1.500000000 0 False\n");
    assert_eq!(line(TraceFormat::FioIolog), "1500000 /dev/flashlab3 write 4096 8192\n");
    assert_eq!(line(TraceFormat::SsdsimFin), "0\t1500000000\t3\t0\tWrite\t8\t16\t1\n");
    assert_eq!(line(TraceFormat::Fiu), "1500000000 0 flashlab 8 16 W 0 3 -\n");
    assert_eq!(line(TraceFormat::Blkparse), "  0,3    0        0 1.500000000     0  D   W 8 + 16 [flashlab]\n");
    let mut header = Vec::new();
    write_header(&mut header, TraceFormat::Csv).unwrap();
    assert_eq!(header, b"time_ns,op,offset_bytes,len_bytes,device\n");
}

#[test]
fn writers_round_unaligned_ranges_outward_and_reject_trims() {
    let r = req(0, Op::Read, 1000, 100, 0);
    let mut out = Vec::new();
    write_request(&mut out, TraceFormat::Ssdsim, &r).unwrap();
    assert_eq!(out, b"0 0 1 2 1\n");
    out.clear();
    write_request(&mut out, TraceFormat::Spc, &r).unwrap();
    assert_eq!(out, b"0,1,588,r,0.000000000\n");
    let trim = req(0, Op::Trim, 0, 512, 0);
    for &format in TraceFormat::ALL {
        let result = write_request(&mut Vec::new(), format, &trim);
        assert_eq!(result.is_ok(), format.supports_trim(), "{format}");
        if let Err(e) = result {
            assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
        }
    }
}

#[test]
fn trace_writer_makes_replayable_fio_logs() {
    let mut w = TraceWriter::new(Vec::new(), TraceFormat::FioIolog).unwrap();
    w.write(&req(1000, Op::Write, 0, 4096, 7)).unwrap();
    w.write(&req(2000, Op::Read, 0, 4096, 2)).unwrap();
    w.write(&req(3000, Op::Trim, 0, 4096, 7)).unwrap();
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    assert_eq!(
        out,
        "fio version 3 iolog\n1 /dev/flashlab7 add\n1 /dev/flashlab7 open\n1 /dev/flashlab7 write 0 4096\n\
         2 /dev/flashlab2 add\n2 /dev/flashlab2 open\n2 /dev/flashlab2 read 0 4096\n3 /dev/flashlab7 trim 0 4096\n\
         3 /dev/flashlab2 close\n3 /dev/flashlab7 close\n"
    );
    // Devices are renumbered in order of first appearance.
    let back = read_all(TraceFormat::FioIolog, out.as_bytes());
    assert_eq!(back.iter().map(|r| r.device).collect::<Vec<_>>(), [0, 1, 0]);
}

#[test]
fn trace_writer_numbers_lines() {
    let mut w = TraceWriter::new(Vec::new(), TraceFormat::SsdsimFin).unwrap();
    for i in 0..3 {
        w.write(&req(i, Op::Read, 0, 512, 0)).unwrap();
    }
    let out = String::from_utf8(w.finish().unwrap()).unwrap();
    let ns: Vec<&str> = out.lines().map(|l| l.split('\t').next().unwrap()).collect();
    assert_eq!(ns, ["0", "1", "2"]);
}

// ---------------------------------------------------------------- proptest

/// A request representable exactly in `format`.
fn request_for(format: TraceFormat) -> BoxedStrategy<Request> {
    let ops: Vec<Op> =
        if format.supports_trim() { vec![Op::Read, Op::Write, Op::Trim] } else { vec![Op::Read, Op::Write] };
    let op = proptest::sample::select(ops);
    let sector_aligned =
        !matches!(format, TraceFormat::Msr | TraceFormat::Csv | TraceFormat::Wiscsee | TraceFormat::FioIolog);
    let time = match format {
        TraceFormat::Msr => (0..=u64::MAX / 100).prop_map(|t| t * 100).boxed(),
        TraceFormat::FioIolog => (0..=u64::MAX / 1000).prop_map(|t| t * 1000).boxed(),
        _ => any::<u64>().boxed(),
    };
    let device = match format {
        TraceFormat::Wiscsee | TraceFormat::Cloudphysics | TraceFormat::FioIolog => Just(0u32).boxed(),
        _ => any::<u32>().boxed(),
    };
    let len_sectors_for_spc = format == TraceFormat::Spc;
    (time, op, 0u64..(1 << 54), 1u64..(1 << 24), device)
        .prop_map(move |(time_ns, op, off, len, device)| {
            let (offset_bytes, len_bytes) = if sector_aligned {
                let len = if len_sectors_for_spc { len } else { len * 512 };
                (off * 512, len)
            } else {
                (off, len)
            };
            Request { time_ns, op, offset_bytes, len_bytes, device }
        })
        .boxed()
}

fn round_trip(format: TraceFormat, reqs: &[Request]) -> Result<(), TestCaseError> {
    let mut w = TraceWriter::new(Vec::new(), format).map_err(|e| TestCaseError::fail(e.to_string()))?;
    for r in reqs {
        w.write(r).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    let out = w.finish().map_err(|e| TestCaseError::fail(e.to_string()))?;
    let back: Result<Vec<_>, _> = TraceReader::new(out.as_slice(), format, opts("rt")).collect();
    let back = back.map_err(|e| TestCaseError::fail(format!("{format}: {e}\n{}", String::from_utf8_lossy(&out))))?;
    prop_assert_eq!(&back, &reqs.to_vec(), "{}", format);
    // Auto detection finds a format that reads the output identically.
    let detected = TraceReader::with_auto_detect(out.as_slice(), opts("rt"))
        .map_err(|e| TestCaseError::fail(format!("{format}: {e}\n{}", String::from_utf8_lossy(&out))))?;
    let expected_format = if format == TraceFormat::Mqsim { TraceFormat::Ssdsim } else { format };
    prop_assert_eq!(detected.format(), expected_format);
    let again: Vec<_> = detected.collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(again, reqs.to_vec());
    // The stateless writer produces the same request lines.
    let mut single = Vec::new();
    write_header(&mut single, format).map_err(|e| TestCaseError::fail(e.to_string()))?;
    for r in reqs {
        write_request(&mut single, format, r).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
    let back: Vec<_> = TraceReader::new(single.as_slice(), format, opts("rt"))
        .collect::<Result<_, _>>()
        .map_err(|e| TestCaseError::fail(e.to_string()))?;
    prop_assert_eq!(back, reqs.to_vec());
    Ok(())
}

fn requests_for(format: TraceFormat) -> impl Strategy<Value = (TraceFormat, Vec<Request>)> {
    proptest::collection::vec(request_for(format), 1..12).prop_map(move |v| (format, v))
}

fn any_format() -> impl Strategy<Value = TraceFormat> {
    proptest::sample::select(TraceFormat::ALL.to_vec())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn round_trip_every_format((format, reqs) in any_format().prop_flat_map(requests_for)) {
        round_trip(format, &reqs)?;
    }

    #[test]
    fn garbage_never_panics(format in any_format(), lines in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..60), 0..8)) {
        let text = lines.join(&b'\n');
        check_invariants(TraceReader::new(text.as_slice(), format, opts("g")));
        let skip = ReaderOptions { skip_bad_lines: true, ..opts("g") };
        check_invariants(TraceReader::new(text.as_slice(), format, skip));
        if let Ok(r) = TraceReader::with_auto_detect(text.as_slice(), opts("g")) {
            check_invariants(r);
        }
    }

    /// Lines whole in the reader's buffer and lines split across a tiny
    /// buffer give the same requests, errors, line numbers and skipped counts.
    #[test]
    fn a_tiny_read_buffer_changes_nothing(format in any_format(), lines in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(TOKENS.to_vec()), 0..12), 1..8), cap in 1usize..9, skip in any::<bool>()) {
        let text: Vec<String> = lines.iter().map(|l| l.concat()).collect();
        let text = text.join("\n");
        let o = ReaderOptions { skip_bad_lines: skip, ..opts("p") };
        let whole = outcome(TraceReader::new(text.as_bytes(), format, o.clone()));
        let split = outcome(TraceReader::new(std::io::BufReader::with_capacity(cap, text.as_bytes()), format, o));
        prop_assert_eq!(whole, split);
    }

    #[test]
    fn token_soup_never_panics(format in any_format(), lines in proptest::collection::vec(proptest::collection::vec(proptest::sample::select(TOKENS.to_vec()), 0..12), 1..6)) {
        let text: Vec<String> = lines.iter().map(|l| l.concat()).collect();
        let text = text.join("\n");
        check_invariants(TraceReader::new(text.as_bytes(), format, opts("t")));
        if let Ok(r) = TraceReader::with_auto_detect(text.as_bytes(), opts("t")) {
            check_invariants(r);
        }
        let sample: Vec<&str> = text.lines().collect();
        let _ = detect(&sample);
    }
}

const TOKENS: &[&str] = &[
    " ",
    "\t",
    ",",
    "0",
    "1",
    "7",
    "512",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999",
    "-1",
    "1.5",
    "1e-05",
    "1e400",
    ".",
    "+",
    "8,0",
    "D",
    "C",
    "Q",
    "W",
    "R",
    "RA",
    "DS",
    "read",
    "write",
    "trim",
    "discard",
    "Read",
    "Write",
    "2a",
    "28",
    "42",
    "0x",
    "fio version 3 iolog",
    "fio version 2 iolog",
    "add",
    "open",
    "version,time,op,size,lbn",
    "op,offset_bytes,len_bytes",
    "time_ns",
    "#",
    "\r",
    "\u{feff}",
    "é",
    "[p]",
];

/// Everything a reader yields, as comparable text: each item with the line
/// number after it, then the skipped count.
fn outcome<R: std::io::BufRead>(mut reader: TraceReader<R>) -> Vec<String> {
    let mut out = Vec::new();
    while let Some(item) = reader.next() {
        out.push(format!("{:?} @{}", item.map_err(|e| e.to_string()), reader.line_number()));
    }
    out.push(format!("skipped {}", reader.skipped_lines()));
    out
}

/// Requests are valid, an error ends the stream, and nothing panics.
fn check_invariants<R: std::io::BufRead>(mut reader: TraceReader<R>) {
    let mut last_line = 0;
    while let Some(item) = reader.next() {
        assert!(reader.line_number() >= last_line);
        last_line = reader.line_number();
        match item {
            Ok(r) => {
                assert!(r.len_bytes > 0);
                assert!(r.offset_bytes.checked_add(r.len_bytes).is_some());
            }
            Err(e) => {
                let s = e.to_string();
                assert!(!s.contains('\n'), "multi-line error: {s:?}");
                assert!(reader.next().is_none());
                break;
            }
        }
    }
}

// --------------------------------------------- deterministic mutation fuzz

/// Samples of every format used as fuzz seeds.
fn seeds() -> Vec<&'static [u8]> {
    vec![
        b"0 0 303567 7 0\n78643005 1 55596 6 1\n",
        b"0\t0\t0\t0\tWrite\t303552\t32\t1\n4\t78643000\t0\t1\tRead\t55584\t32\t1\n",
        b"128166372003061629,hm,1,Read,3154403328,32768,1409\n",
        b"0,303567,3584,w,0.000000\n1,55596,3072,R,0.078643\n",
        BLKPARSE.as_bytes(),
        b"89966527394865 4475 nfsd 103376072 8 W 6 0 a7d8c1e1c5e9fb1\n",
        b"fio version 2 iolog\n/dev/sdb add\n/dev/sdb open\n/dev/sdb read 0 4096\n/dev/sdb trim 0 512\n",
        b"fio version 3 iolog\n2 f add\n878 f write 0 16384\n",
        b"version,time,op,size,lbn\n1,5633898,2a,512,42932745\n1,5633899,42,4096,8\n",
        b"39949 D read 299008 4096 0.000000000 0 False\n0 C read 299008 4096 0.000122793 0.000122793 False\n",
        b"time_ns,op,offset_bytes,len_bytes,device\n5,read,0,4096,1\n",
    ]
}

/// xorshift64*: deterministic, seedable, dependency-free.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

const INTERESTING: &[&[u8]] = &[
    b"\n",
    b"\r\n",
    b" ",
    b"\t",
    b",",
    b"#",
    b"0",
    b"9",
    b"18446744073709551615",
    b"99999999999999999999",
    b"-",
    b".",
    b"e",
    b"\xff",
    b"\xEF\xBB\xBF",
    b"+",
    b"D",
    b"read",
    b"trim",
];

fn mutate(rng: &mut Rng, data: &mut Vec<u8>) {
    for _ in 0..1 + rng.below(4) {
        let pos = rng.below(data.len() + 1);
        match rng.below(5) {
            0 if !data.is_empty() => {
                let i = pos.min(data.len() - 1);
                data[i] = rng.next() as u8;
            }
            1 if !data.is_empty() => {
                let end = (pos + 1 + rng.below(8)).min(data.len());
                data.drain(pos.min(end)..end);
            }
            2 => {
                let tok = INTERESTING[rng.below(INTERESTING.len())];
                data.splice(pos..pos, tok.iter().copied());
            }
            3 if !data.is_empty() => {
                let start = rng.below(data.len());
                let end = (start + 1 + rng.below(16)).min(data.len());
                let chunk = data[start..end].to_vec();
                data.splice(pos..pos, chunk);
            }
            _ => data.truncate(pos),
        }
    }
}

/// A request read from `format` is written and read back unchanged (fio
/// iologs renumber devices from 0).
fn assert_writes_back(format: TraceFormat, req: &Request) {
    let mut out = Vec::new();
    write_header(&mut out, format).unwrap();
    write_request(&mut out, format, req).unwrap();
    let back: Vec<Request> = TraceReader::new(out.as_slice(), format, opts("back"))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{format}: {e}"));
    let mut expected = *req;
    if format == TraceFormat::FioIolog {
        expected.device = 0;
    }
    assert_eq!(back, [expected], "{format}");
}

#[test]
fn poor_mans_fuzz() {
    let seeds = seeds();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut requests = 0usize;
    for iteration in 0..4000 {
        let mut data = seeds[iteration % seeds.len()].to_vec();
        mutate(&mut rng, &mut data);
        for &format in TraceFormat::ALL {
            let skip = ReaderOptions { skip_bad_lines: iteration % 2 == 0, ..opts("fuzz") };
            for req in TraceReader::new(data.as_slice(), format, skip).flatten() {
                requests += 1;
                assert_writes_back(format, &req);
            }
            check_invariants(TraceReader::new(data.as_slice(), format, opts("fuzz")));
        }
        if let Ok(reader) = TraceReader::with_auto_detect(data.as_slice(), opts("fuzz")) {
            check_invariants(reader);
        }
    }
    assert!(requests > 1000, "mutations should keep many lines valid ({requests})");
}

// ------------------------------------------------------------ real traces

fn shared_traces() -> Option<PathBuf> {
    let dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/../../../shared/traces"));
    if dir.is_dir() {
        Some(dir)
    } else {
        println!("note: {} is absent; skipping the shared-trace test", dir.display());
        None
    }
}

fn open(dir: &std::path::Path, name: &str) -> Option<BufReader<File>> {
    match File::open(dir.join(name)) {
        Ok(f) => Some(BufReader::new(f)),
        Err(e) => {
            println!("note: cannot open {name} ({e}); skipping it");
            None
        }
    }
}

/// (file, format, detected format, requests, reads, writes, trims)
const SHARED: &[(&str, TraceFormat, TraceFormat, u64, u64, u64, u64)] = &[
    ("example.ascii", TraceFormat::Ssdsim, TraceFormat::Ssdsim, 10_000, 4078, 5922, 0),
    ("fin1", TraceFormat::SsdsimFin, TraceFormat::SsdsimFin, 100, 13, 87, 0),
    ("tpcc-small.trace", TraceFormat::Mqsim, TraceFormat::Ssdsim, 6_999, 4381, 2618, 0),
    ("wsrch-small.trace", TraceFormat::Mqsim, TraceFormat::Ssdsim, 24_783, 24_779, 4, 0),
    ("cloudPhysicsIO.csv", TraceFormat::Cloudphysics, TraceFormat::Cloudphysics, 113_872, 46_974, 66_898, 0),
    ("wiscsee-sqlitewal-events.txt", TraceFormat::Wiscsee, TraceFormat::Wiscsee, 5_008, 4, 5_003, 1),
];

#[test]
fn shared_traces_counts_and_detection() {
    let Some(dir) = shared_traces() else { return };
    for &(name, format, detected, requests, reads, writes, trims) in SHARED {
        let Some(file) = open(&dir, name) else {
            continue;
        };
        let s = stats(TraceReader::new(file, format, opts(name))).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            (s.requests, s.reads, s.writes, s.trims, s.skipped_lines),
            (requests, reads, writes, trims, 0),
            "{name}"
        );
        let Some(file) = open(&dir, name) else {
            continue;
        };
        let reader = TraceReader::with_auto_detect(file, opts(name)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(reader.format(), detected, "{name}");
        let auto_stats = stats(reader).unwrap();
        assert_eq!(auto_stats.requests, requests, "{name}");
        assert_eq!((auto_stats.reads, auto_stats.writes), (reads, writes), "{name}");
    }
}

#[test]
fn shared_traces_details() {
    let Some(dir) = shared_traces() else { return };
    if let Ok(bytes) = std::fs::read(dir.join("wsrch-small.trace")) {
        // This file (not example.ascii) is the one without a final newline.
        assert!(!bytes.ends_with(b"\n"));
        let last = TraceReader::new(bytes.as_slice(), TraceFormat::Mqsim, opts("w")).last().unwrap().unwrap();
        assert_eq!(last, req(60_066_625_000, Op::Read, 34_371_424 * 512, 64 * 512, 1));
    }
    if let Some(file) = open(&dir, "cloudPhysicsIO.csv") {
        let s = stats(TraceReader::new(file, TraceFormat::Cloudphysics, opts("cp"))).unwrap();
        // Times are seconds: the sample spans exactly two hours.
        assert_eq!(s.last_time_s.unwrap() - s.first_time_s.unwrap(), 7200.0);
    }
    if let Some(file) = open(&dir, "fin1") {
        let first = TraceReader::new(file, TraceFormat::SsdsimFin, opts("fin1")).next().unwrap().unwrap();
        assert_eq!(first, req(0, Op::Write, 303_552 * 512, 32 * 512, 0));
    }
    if let Some(file) = open(&dir, "tpcc-small.trace") {
        let s = stats(TraceReader::new(file, TraceFormat::Mqsim, opts("tpcc"))).unwrap();
        assert!(s.max_end_bytes.unwrap() > 200 << 30, "addresses up to 216 GiB");
    }
}

#[test]
fn disksim_and_diskmon_are_detected_with_their_time_units() {
    // DiskSim ASCII: float milliseconds, hex flags (bit 0 = read).
    let text = b"579.500020 0 1320146 8 1\n580.000000 0 64 16 0\n";
    assert_eq!(auto(text).unwrap(), TraceFormat::Disksim);
    let reqs = read_all(TraceFormat::Disksim, text);
    assert_eq!(
        reqs,
        vec![req(579_500_020, Op::Read, 1_320_146 * 512, 4096, 0), req(580_000_000, Op::Write, 64 * 512, 8192, 0)]
    );
    // Integer times stay ssdsim (nanoseconds).
    assert_eq!(auto(b"579 0 1320146 8 1\n").unwrap(), TraceFormat::Ssdsim);
    // DiskMon: n time_s duration_s disk Read|Write sector length.
    let text = b"1\t0.000000\t0.00004768\t0\tWrite\t3074\t8\n2\t0.5\t0.001\t1\tRead\t10\t1\n";
    assert_eq!(auto(text).unwrap(), TraceFormat::Diskmon);
    let reqs = read_all(TraceFormat::Diskmon, text);
    assert_eq!(reqs, vec![req(0, Op::Write, 3074 * 512, 4096, 0), req(500_000_000, Op::Read, 5120, 512, 1)]);
}
