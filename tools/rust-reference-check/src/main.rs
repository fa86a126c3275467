//! Lists an HRRYFILE with the Rust reference implementation's reader, in the line format
//! of list.cpp (libhurray's side), so that the two listings can be compared with diff.
//!
//!   hurray-ref-check FILE
//!
//! Lines starting with '#' are checks of this side only and are not compared.

use std::process::ExitCode;

use hurray_core::TensorDescriptor;
use hurray_io::file::{FileReader, KvValue};

const TABLE_KEY: &str = "hurray.descriptor_table";

fn fnv1a64<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

fn kv_line(key: &str, v: &KvValue) -> String {
    let body = match v {
        KvValue::String(s) => format!("string len={} fnv={:016x}", s.len(), fnv1a64([s.as_bytes()])),
        KvValue::Int64(x) => format!("int64 {x}"),
        KvValue::Uint64(x) => format!("uint64 {x}"),
        KvValue::Float64(x) => format!("float64 bits={:016x}", x.to_bits()),
        KvValue::Bool(x) => format!("bool {}", *x as u8),
        KvValue::Bytes(b) => format!("bytes len={} fnv={:016x}", b.len(), fnv1a64([b.as_slice()])),
        KvValue::Array(a) => {
            let elem = match a.first() {
                Some(KvValue::String(_)) => "string",
                Some(KvValue::Int64(_)) => "int64",
                Some(KvValue::Uint64(_)) => "uint64",
                Some(KvValue::Float64(_)) => "float64",
                Some(KvValue::Bool(_)) => "bool",
                Some(KvValue::Bytes(_)) => "bytes",
                _ => "?",
            };
            // Element values hashed through their kv_line text: same on both sides.
            let text: Vec<String> = a.iter().map(|e| kv_line("", e)).collect();
            let joined = text.join("\n");
            format!("array elem={elem} count={} fnv={:016x}", a.len(), fnv1a64([joined.as_bytes()]))
        }
        other => format!("other {other:?}"),
    };
    if key.is_empty() {
        body
    } else {
        format!("kv {key} {body}")
    }
}

fn shape_text(dims: &[u64]) -> String {
    let d: Vec<String> = dims
        .iter()
        .map(|&x| if x == u64::MAX { "?".to_string() } else { x.to_string() })
        .collect();
    format!("[{}]", d.join(","))
}

async fn run(path: &str) -> Result<(), Box<dyn std::error::Error>> {
    let file = tokio::fs::File::open(path).await?;
    let mut reader = FileReader::open(file).await?;

    let index = reader.index.clone();
    println!("tensors {}", index.len());
    let mut descs: Vec<TensorDescriptor> = Vec::with_capacity(index.len());
    for (i, e) in index.iter().enumerate() {
        let t = reader.read_tensor(&e.name).await?;
        let d = &t.descriptor;
        let sizes: Vec<String> = t.buffers.iter().map(|b| b.len().to_string()).collect();
        println!(
            "tensor {i} {} dtype=0x{:02x} shape={} layout=0x{:02x} buffers=[{}] data_length={} fnv={:016x}",
            t.name,
            d.element_type.tag(),
            shape_text(d.shape.dims()),
            d.layout.tag(),
            sizes.join(","),
            e.data_length,
            fnv1a64(t.buffers.iter().map(|b| &b[..])),
        );
        descs.push(t.descriptor);
    }

    let kv = reader.kv();
    println!("kv {}", kv.len());
    for (k, v) in kv {
        println!("{}", kv_line(k, v));
    }

    // This side's own checks of the table (the reference knows nothing of it): its value
    // is the HRDT header and a copy of each descriptor in place, which the reference's
    // decoder reads as the descriptor it decoded in place.
    let table: Vec<&Vec<u8>> = kv
        .iter()
        .filter(|(k, _)| k == TABLE_KEY)
        .filter_map(|(_, v)| if let KvValue::Bytes(b) = v { Some(b) } else { None })
        .collect();
    match table.as_slice() {
        [] => println!("# table: absent"),
        [t] => {
            let bytes = std::fs::read(path)?;
            let last = kv.last().map(|(k, _)| k.as_str()) == Some(TABLE_KEY);
            let version = if t.len() >= 16 { u16::from_le_bytes([t[4], t[5]]) } else { 0 };
            let ok_header = t.len() >= 16
                && &t[0..4] == b"HRDT"
                && (version == 1 || version == 2)
                && u16::from_le_bytes([t[6], t[7]]) == 0
                && u64::from_le_bytes(t[8..16].try_into().unwrap()) == index.len() as u64;
            // Where each entry's copy starts (version 1: in index order; version 2: its
            // class's copy, classes numbered by first appearance after the classes).
            let lengths: Vec<usize> = index.iter().map(|e| e.descriptor_length as usize).collect();
            let (at, end) = if !ok_header {
                (None, 0)
            } else if version == 1 {
                let mut pos = 16usize;
                let mut at = Vec::new();
                for n in &lengths {
                    at.push(pos);
                    pos += n;
                }
                (Some(at), pos)
            } else {
                locate_v2(t, &lengths)
            };
            let mut copies_equal = 0usize;
            let mut decoded_equal = 0usize;
            for (k, (e, d)) in index.iter().zip(&descs).enumerate() {
                let n = e.descriptor_length as usize;
                let off = e.descriptor_offset as usize;
                let pos = at.as_ref().map_or(usize::MAX, |a| a[k]);
                if pos != usize::MAX && pos + n <= t.len() && off + n <= bytes.len() {
                    let copy = &t[pos..pos + n];
                    if copy == &bytes[off..off + n] {
                        copies_equal += 1;
                    }
                    if let Ok(dc) = TensorDescriptor::decode(copy) {
                        if &dc == d {
                            decoded_equal += 1;
                        }
                    }
                }
            }
            let pos = end;
            let exact = pos == t.len();
            let ok = ok_header && exact && last && copies_equal == index.len() && decoded_equal == index.len();
            println!(
                "# table: {} bytes, version {}, header {}, last KV entry {}, exact length {}, {}/{} copies byte-equal to the descriptor in place, {}/{} decoded by the reference equal to the descriptor it read in place: {}",
                t.len(),
                version,
                if ok_header { "ok" } else { "BAD" },
                if last { "yes" } else { "NO" },
                if exact { "yes" } else { "NO" },
                copies_equal,
                index.len(),
                decoded_equal,
                index.len(),
                if ok { "ok" } else { "BAD" }
            );
            if !ok {
                return Err("descriptor table check failed".into());
            }
        }
        _ => return Err("more than one descriptor table entry".into()),
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: hurray-ref-check FILE");
        return ExitCode::from(2);
    }
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    match rt.block_on(run(&args[1])) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            println!("error {e}");
            eprintln!("{}: {e}", args[1]);
            ExitCode::FAILURE
        }
    }
}

/// Version 2's copies: the offset of each entry's class copy and the end of the last
/// copy, or (None, 0) when the classes break the rules (one out of order, or two
/// lengths in one class).
fn locate_v2(t: &[u8], lengths: &[usize]) -> (Option<Vec<usize>>, usize) {
    let n = lengths.len();
    if t.len() < 24 + 4 * n {
        return (None, 0);
    }
    let class_count = u64::from_le_bytes(t[16..24].try_into().unwrap()) as usize;
    let mut class_at: Vec<(usize, usize)> = Vec::new();
    let mut at = Vec::with_capacity(n);
    let mut pos = 24 + 4 * n;
    for (k, len) in lengths.iter().enumerate() {
        let c = u32::from_le_bytes(t[24 + 4 * k..28 + 4 * k].try_into().unwrap()) as usize;
        if c == class_at.len() {
            class_at.push((pos, *len));
            at.push(pos);
            pos += len;
        } else if c < class_at.len() && class_at[c].1 == *len {
            at.push(class_at[c].0);
        } else {
            return (None, 0);
        }
    }
    if class_at.len() != class_count {
        return (None, 0);
    }
    (Some(at), pos)
}
