use clap::Parser;

/// The checks allocate many small strings and vectors (witnesses, example inputs, automaton
/// states); mimalloc serves them faster than the system allocator.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = permaudit::cli::Cli::parse();
    std::process::exit(permaudit::cli::run(cli));
}
