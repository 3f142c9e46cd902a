//! Builds ccsim's BPF programs (bpf/*.bpf.c) and their loader (bpf/loader.c) when the tools are
//! present: clang, bpftool, gcc, libbpf headers and the running kernel's BTF. Then sets
//! `cfg(ccsim_bpf)` and `src/bpf.rs` embeds the four artefacts. Otherwise - or if a compile
//! fails - it warns, writes the reason to `$OUT_DIR/bpf_unavailable.txt` and lets the crate build
//! without them: the simulator must build on machines without these tools.
//! `CCSIM_NO_BPF=1` skips the BPF build.

use std::path::{Path, PathBuf};
use std::process::Command;

const BPF_SOURCES: [&str; 3] = ["ccsim_dctcp", "ccsim_nv", "ecnmark"];

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("OUT_DIR"));
    let src = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR")).join("bpf");
    println!("cargo::rustc-check-cfg=cfg(ccsim_bpf)");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=bpf");
    for f in ["ccsim_cc_common.h", "ccsim_dctcp.bpf.c", "ccsim_nv.bpf.c", "ecnmark.bpf.c", "loader.c"] {
        println!("cargo:rerun-if-changed=bpf/{f}");
    }
    println!("cargo:rerun-if-env-changed=CCSIM_NO_BPF");
    println!("cargo:rerun-if-env-changed=PATH");
    match build(&src, &out) {
        Ok(()) => {
            let _ = std::fs::remove_file(out.join("bpf_unavailable.txt"));
            println!("cargo:rustc-cfg=ccsim_bpf");
        }
        Err(reason) => {
            for line in reason.lines().filter(|l| !l.trim().is_empty()).take(40) {
                println!("cargo:warning=ccsim BPF programs not built: {line}");
            }
            std::fs::write(out.join("bpf_unavailable.txt"), &reason).expect("write bpf_unavailable.txt");
            // Try again once the toolchain is installed (scripts/setup after a first build): a
            // path that does not exist keeps the build script stale until it does.
            if reason.contains("not found") {
                println!("cargo:rerun-if-changed=/usr/include/bpf/bpf_helpers.h");
                for tool in ["/usr/bin/clang", "/usr/sbin/bpftool"] {
                    println!("cargo:rerun-if-changed={tool}");
                }
            }
        }
    }
}

/// The first of `names` found on PATH or in the usual sbin directories.
fn find_tool(names: &[&str]) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    dirs.extend(["/usr/local/sbin", "/usr/sbin", "/sbin", "/usr/bin"].iter().map(PathBuf::from));
    names.iter().find_map(|n| dirs.iter().map(|d| d.join(n)).find(|p| p.is_file()))
}

fn run(cmd: &mut Command, what: &str) -> Result<std::process::Output, String> {
    let o = cmd.output().map_err(|e| format!("{what}: cannot run {:?}: {e}", cmd.get_program()))?;
    if !o.status.success() {
        return Err(format!(
            "{what} failed ({}):\n{}{}",
            o.status,
            String::from_utf8_lossy(&o.stderr),
            String::from_utf8_lossy(&o.stdout)
        ));
    }
    Ok(o)
}

fn build(src: &Path, out: &Path) -> Result<(), String> {
    if std::env::var_os("CCSIM_NO_BPF").is_some_and(|v| !v.is_empty() && v != "0") {
        return Err("CCSIM_NO_BPF is set".into());
    }
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux")
        || std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() != Ok("x86_64")
    {
        return Err("ccsim's BPF programs are built for x86_64 Linux only".into());
    }
    let fix = "install clang, llvm, libbpf-dev, bpftool and gcc (Debian/Ubuntu: apt-get install clang llvm \
               libbpf-dev bpftool gcc libelf-dev zlib1g-dev; scripts/setup does), then rebuild";
    let clang = find_tool(&["clang", "clang-19", "clang-16", "clang-15", "clang-14"])
        .ok_or_else(|| format!("clang not found; {fix}"))?;
    let bpftool = find_tool(&["bpftool"]).ok_or_else(|| format!("bpftool not found; {fix}"))?;
    let gcc = find_tool(&["gcc", "cc"]).ok_or_else(|| format!("gcc not found; {fix}"))?;
    if !Path::new("/usr/include/bpf/bpf_helpers.h").is_file() {
        return Err(format!("/usr/include/bpf/bpf_helpers.h not found (libbpf-dev); {fix}"));
    }
    let btf = Path::new("/sys/kernel/btf/vmlinux");
    if !btf.is_file() {
        return Err("/sys/kernel/btf/vmlinux not found: the kernel has no BTF (CONFIG_DEBUG_INFO_BTF); \
                    BPF struct_ops congestion controls need it"
            .into());
    }
    println!("cargo:rerun-if-changed=/sys/kernel/btf/vmlinux");

    // vmlinux.h of the running kernel (the programs use CO-RE, so they also load on others).
    let o =
        run(Command::new(&bpftool).args(["btf", "dump", "file"]).arg(btf).args(["format", "c"]), "bpftool btf dump")?;
    std::fs::write(out.join("vmlinux.h"), &o.stdout).map_err(|e| format!("write vmlinux.h: {e}"))?;

    let strip = find_tool(&["llvm-strip", "llvm-strip-19", "llvm-strip-16", "llvm-strip-15", "llvm-strip-14"]);
    for name in BPF_SOURCES {
        let obj = out.join(format!("{name}.bpf.o"));
        run(
            Command::new(&clang)
                .args(["-O2", "-g", "-Wall", "-target", "bpf", "-D__TARGET_ARCH_x86"])
                .arg("-I")
                .arg(out)
                .arg("-I")
                .arg(src)
                .arg("-c")
                .arg(src.join(format!("{name}.bpf.c")))
                .arg("-o")
                .arg(&obj),
            &format!("clang {name}.bpf.c"),
        )?;
        // Drop the DWARF (BTF stays): the objects are embedded in the binary.
        if let Some(strip) = &strip {
            let _ = Command::new(strip).arg("-g").arg(&obj).status();
        }
    }

    // The loader: libbpf linked statically if possible (then only libelf and zlib are needed at
    // run time), else dynamically.
    let loader = out.join("ccsim-bpf-loader");
    let base = |c: &mut Command| {
        c.args(["-O2", "-Wall", "-o"]).arg(&loader).arg(src.join("loader.c"));
    };
    let mut stat = Command::new(&gcc);
    base(&mut stat);
    stat.args(["-Wl,-Bstatic", "-lbpf", "-Wl,-Bdynamic", "-lelf", "-lz"]);
    if run(&mut stat, "gcc loader.c (static libbpf)").is_err() {
        let mut dynamic = Command::new(&gcc);
        base(&mut dynamic);
        dynamic.args(["-lbpf", "-lelf", "-lz"]);
        run(&mut dynamic, "gcc loader.c")?;
    }
    Ok(())
}
