//! The command line's grammar (clap): every subcommand, its options, help text and examples.
//! Each command's module takes its own arguments struct from here.

use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// ccsim's version and the commit it was built from (`build.rs`).
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("CCSIM_COMMIT"), ")");

#[derive(Parser, Debug)]
#[command(
    name = "ccsim",
    version = VERSION,
    about = "Linux-faithful datacenter congestion control, simulated at packet level",
    long_about = "Linux-faithful datacenter congestion control, simulated at packet level: DCTCP with \
                  ECN-marking switches, CUBIC, Reno, BBR, TCP-NV and FreeBSD's DCTCP, with TCP that follows \
                  Linux callback for callback. Scenarios are TOML files (docs/scenarios.md).",
    after_help = "Exit status: 0 success; 1 a packetdrill script failed; 2 bad input or usage; 130 a run \
                  interrupted (its results so far written).",
    arg_required_else_help = true,
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Run a scenario and write its results to a directory.
    #[command(after_help = "Examples:\n  ccsim run scenarios/mininet-dctcp.toml --out results/dctcp\n  \
                            ccsim run scenarios/mininet-dctcp.toml --out results/s7 --set run.seed=7\n  \
                            ccsim run X.toml --out=results/k30 --set 'queues.dctcp.classes[0].k=30'")]
    Run(RunArgs),
    /// Validate a scenario and print it with every default filled in.
    #[command(after_help = "Example:\n  ccsim check scenarios/mininet-dctcp.toml --set tcp.cc=cubic")]
    Check(CheckArgs),
    /// Reproduce the seed experiments: scorecard and report.html.
    #[command(
        after_help = "Examples:\n  ccsim reproduce                      # everything, one experiment per core\n  \
                            ccsim reproduce linux-incast --quick --json\n  ccsim reproduce --list"
    )]
    Reproduce(ReproduceArgs),
    /// Run a parameter sweep on Dask (through the Python package: pip install .).
    #[command(after_help = "Example:\n  ccsim sweep k-sweep.toml --out sweeps/k --workers 2\n\nThe sweep file and \
                            the Python API: docs/python.md.")]
    Sweep(SweepArgs),
    /// Run packetdrill scripts against ccsim's TCP (exit 1 if any fails).
    #[command(after_help = "Example:\n  ccsim pdrill tests/*.pkt --hz 250 --json")]
    Pdrill(PdrillArgs),
    /// Run packetdrill's TCP suite beside Linux 6.18's results (exit 1 where only Linux passes).
    #[command(after_help = "Examples:\n  ccsim conformance                     # the in-scope scripts\n  \
                            ccsim conformance --all --suite ../packetdrill/gtests/net/tcp/..\n\nThe suite: \
                            CCSIM_PACKETDRILL, else ../shared/conformance/packetdrill (holding upstream/).")]
    Conformance(ConformanceArgs),
    /// Run a scenario to a time and list its sockets as iproute2 6.1's `ss -tin` does.
    #[command(after_help = "Examples:\n  ccsim ss scenarios/mininet-dctcp.toml --at 2s\n  \
                            ccsim ss scenarios/mininet-dctcp.toml --at 2s -e      # ss -tine: ECN flags, timers\n  \
                            ccsim ss scenarios/mininet-dctcp.toml --at 2.5s 'dport = :5001' and state established\n\n\
                            Filters: state STATE, exclude STATE, sport/dport OP :N, src/dst ADDR[/LEN][:PORT], \
                            dev = HOST, mark = 0xN[/0xM], cc NAME; and, or, not, ( ). Hosts are 10.0.0.N in \
                            topology order.")]
    Ss(SsArgs),
    /// Time the simulator on built-in scenarios (data packets per CPU-second, peak RSS).
    #[command(
        after_help = "Examples:\n  ccsim bench                 # S1, S1-long, S2, S3\n  ccsim bench S4 --repeat 3\n  \
                            ccsim bench --list\n  ccsim bench --scenario S3 > s3.toml"
    )]
    Bench(BenchArgs),
    /// Run a scenario on this machine's kernel (root): namespaces, veth, HTB, BPF.
    #[command(
        after_help = "Examples:\n  sudo ccsim emulate scenarios/mininet-dctcp.toml --ignore-delay --out results/emu\n  \
                            sudo ccsim emulate --cleanup"
    )]
    Emulate(EmulateArgs),
    /// Score two runs of one scenario against each other (e.g. simulated vs emulated).
    #[command(after_help = "Example:\n  ccsim compare results/dctcp results/emu")]
    Compare(CompareArgs),
    /// Simulator against kernel (root) on the Mininet-HiFi network, per congestion control.
    #[command(after_help = "Example:\n  sudo ccsim fidelity --duration 5s --no-1g")]
    Fidelity(FidelityArgs),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    #[command(after_help = "Example:\n  ccsim completions bash > /etc/bash_completion.d/ccsim")]
    Completions(CompletionsArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// The results directory (made if missing).
    #[arg(long, value_name = "DIR")]
    pub out: PathBuf,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Replace the results directory if it is not empty.
    #[arg(long)]
    pub force: bool,
    /// Override a field, checked as if the file held it (repeatable): PATH=VALUE.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
    /// Refuse a run estimated to need more memory (default: 80 % of the machine's), e.g. 8GB.
    #[arg(long, value_name = "SIZE", value_parser = crate::limits::parse_size)]
    pub max_memory: Option<u64>,
    /// Refuse a run whose results are estimated larger (default: the free space where they go).
    #[arg(long, value_name = "SIZE", value_parser = crate::limits::parse_size)]
    pub max_output: Option<u64>,
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Override a field (repeatable): PATH=VALUE.
    #[arg(long = "set", value_name = "PATH=VALUE")]
    pub sets: Vec<String>,
}

#[derive(Args, Debug)]
pub struct ReproduceArgs {
    /// Experiments to run (default: all; see --list).
    pub names: Vec<String>,
    /// Shortened runs (for tests and CI; verdicts may differ from full runs).
    #[arg(long)]
    pub quick: bool,
    /// Where the report and each run's results go.
    #[arg(long, value_name = "DIR", default_value = "results/reproduce")]
    pub out: PathBuf,
    /// Print the scorecard as JSON.
    #[arg(long)]
    pub json: bool,
    /// Experiments run at once (default: one per core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub jobs: Option<u16>,
    /// List the experiments.
    #[arg(long)]
    pub list: bool,
}

#[derive(Args, Debug)]
pub struct SweepArgs {
    /// Everything after `sweep` goes to `python3 -m ccsim sweep` (see its --help).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "ARGS")]
    pub args: Vec<String>,
}

/// When an ACK is sent (kernel versions differ).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AckTiming {
    Now,
    Delayed,
}

/// The receive-window rules of a kernel generation.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum RcvWindowArg {
    /// Linux 6.10+: window from the measured payload share of the buffer, no 64 KB initial cap.
    #[value(name = "current")]
    Current,
    /// Linux 6.6 to 6.9: the measured share, an initial window of at most 65535.
    #[value(name = "pre-6.10")]
    Pre6_10,
    /// Before 6.6: half the buffer is window (tcp_adv_win_scale = 1), initial window at most 65535.
    #[value(name = "pre-6.6")]
    Pre6_6,
}

#[derive(Args, Debug)]
pub struct PdrillArgs {
    /// Scripts to run.
    #[arg(required = true, value_name = "FILE.pkt")]
    pub scripts: Vec<PathBuf>,
    /// Print results as JSON.
    #[arg(long)]
    pub json: bool,
    /// Timing tolerance in microseconds (packetdrill's --tolerance_usecs).
    #[arg(long, value_name = "N")]
    pub tolerance_usecs: Option<u64>,
    /// The kernel's CONFIG_HZ (timer granularity).
    #[arg(long, value_name = "HZ", value_parser = ["100", "250", "300", "1000"])]
    pub hz: Option<String>,
    /// DCTCP ACKs a CE change at once (Linux 4.19+) or delayed (earlier kernels).
    #[arg(long, value_enum)]
    pub dctcp_ce_ack: Option<AckTiming>,
    /// A CWR is ACKed at once (Linux 5.3+) or delayed (earlier kernels).
    #[arg(long, value_enum)]
    pub cwr_ack: Option<AckTiming>,
    /// The receive-window rules: current (Linux 6.10+), pre-6.10 or pre-6.6.
    #[arg(long, value_enum)]
    pub rcv_window: Option<RcvWindowArg>,
    /// Print each script's notes and ignored settings.
    #[arg(long, short)]
    pub verbose: bool,
}

#[derive(Args, Debug)]
pub struct ConformanceArgs {
    /// The suite's directory (holding upstream/); default CCSIM_PACKETDRILL or
    /// ../shared/conformance/packetdrill.
    #[arg(long, value_name = "DIR")]
    pub suite: Option<PathBuf>,
    /// Every script of the suite, not only those in scope for a congestion-control simulator.
    #[arg(long)]
    pub all: bool,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct SsArgs {
    /// The scenario file (TOML).
    pub scenario: PathBuf,
    /// Simulated time to stop at, e.g. 2.5s.
    #[arg(long, value_name = "TIME")]
    pub at: String,
    /// Print the sockets as JSON.
    #[arg(long)]
    pub json: bool,
    /// As ss -o: the option flags (ts sack ecn ecnseen) and the pending timer, timer:(...).
    #[arg(short = 'o', long)]
    pub options: bool,
    /// As ss -e (implies -o): the socket's fwmark and shutdown state (<->).
    #[arg(short = 'e', long)]
    pub extended: bool,
    /// Whose ss to print as: iproute2 6.1, or the 2014 ss of the Linux DCTCP merge commit's example
    /// (its info-line order, `44.2Mbps` rates; no -o or -e).
    #[arg(long, value_enum, default_value_t = SsLayout::Iproute2_6_1)]
    pub layout: SsLayout,
    /// An ss filter expression (several words, as ss takes it).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, value_name = "FILTER")]
    pub filter: Vec<String>,
}

/// The `ss` whose output `ccsim ss` prints.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SsLayout {
    /// iproute2 6.1's `ss -tin` (Debian 12's ss).
    #[value(name = "6.1")]
    Iproute2_6_1,
    /// The ss of 2014 that printed the Linux DCTCP merge commit's example (iproute2 907e1aca).
    #[value(name = "2014")]
    Seed2014,
}

#[derive(Args, Debug)]
pub struct BenchArgs {
    /// Benchmarks to run (default: S1, S1-long, S2, S3; see --list).
    pub names: Vec<String>,
    /// Runs per benchmark (medians reported).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1000))]
    pub repeat: u16,
    /// Print the results as JSON.
    #[arg(long)]
    pub json: bool,
    /// List the benchmarks.
    #[arg(long)]
    pub list: bool,
    /// Print a benchmark's scenario file (for ccsim run).
    #[arg(long, value_name = "NAME")]
    pub scenario: Option<String>,
    /// Internal: run one benchmark in this process and print its figures as JSON.
    #[arg(long, value_name = "NAME", hide = true)]
    pub one: Option<String>,
}

#[derive(Args, Debug)]
pub struct EmulateArgs {
    /// The scenario file (TOML).
    #[arg(required_unless_present = "cleanup")]
    pub scenario: Option<PathBuf>,
    /// The results directory.
    #[arg(long, value_name = "DIR", required_unless_present = "cleanup")]
    pub out: Option<PathBuf>,
    /// Run links without their propagation delay (this kernel has no netem).
    #[arg(long)]
    pub ignore_delay: bool,
    /// Cap link rates (e.g. 1Gbps) to what this machine can emulate.
    #[arg(long, value_name = "RATE")]
    pub max_rate: Option<String>,
    /// Take `ss -tin` snapshots this often (0: none).
    #[arg(long, value_name = "DURATION")]
    pub ss_every: Option<String>,
    /// Print nothing but errors.
    #[arg(long, short)]
    pub quiet: bool,
    /// Remove what killed emulations left behind, as their registries in /run/ccsim list it, and nothing else.
    #[arg(long, conflicts_with_all = ["scenario", "out", "ignore_delay", "max_rate", "ss_every"])]
    pub cleanup: bool,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// A results directory.
    pub a: PathBuf,
    /// Another results directory of the same scenario.
    pub b: PathBuf,
    /// Print the scores as JSON.
    #[arg(long)]
    pub json: bool,
}

#[derive(Args, Debug)]
pub struct FidelityArgs {
    /// Simulated and emulated time per case.
    #[arg(long, value_name = "DURATION", default_value = "10s")]
    pub duration: String,
    /// Where each case's results go.
    #[arg(long, value_name = "DIR", default_value = "results/fidelity")]
    pub out: PathBuf,
    /// Print the scores as JSON.
    #[arg(long)]
    pub json: bool,
    /// Leave out the 1 Gb/s CUBIC case.
    #[arg(long)]
    pub no_1g: bool,
}

#[derive(Args, Debug)]
pub struct CompletionsArgs {
    /// The shell.
    pub shell: clap_complete::Shell,
}
