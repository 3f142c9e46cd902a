//! The `ccsim` binary: the command line of `ccsim_cli`.

fn main() -> std::process::ExitCode {
    ccsim_cli::main(std::env::args().skip(1).collect())
}
