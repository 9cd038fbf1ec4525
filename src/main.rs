use clap::Parser;

fn main() {
    let cli = permaudit::cli::Cli::parse();
    std::process::exit(permaudit::cli::run(cli));
}
