//! `quarry config --print serve|index [FLAGS...]`: the settings the command would run with,
//! each with where it came from (flag, environment, the `--config` file and its line, or the
//! default); secrets are shown as `(set)`.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::Command;

use crate::config_file::{effective_settings, with_settings_file, COMMANDS};

#[derive(clap::Args, Debug)]
pub struct ConfigArgs {
    /// Print the effective settings.
    #[arg(long, required = true)]
    pub print: bool,
    /// The command (serve or index) and the flags it would be given, `--config FILE` among them.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    pub command: Vec<OsString>,
}

pub fn run(args: ConfigArgs, cli: Command) -> anyhow::Result<ExitCode> {
    let name = args.command[0].to_string_lossy().into_owned();
    anyhow::ensure!(
        COMMANDS.contains(&name.as_str()),
        "quarry config --print reads the settings of serve or index, not `{name}`"
    );
    let argv: Vec<OsString> = std::iter::once(OsString::from("quarry")).chain(args.command).collect();
    let (argv, from_file) = with_settings_file(&cli, argv).map_err(anyhow::Error::msg)?;
    // Required arguments left out (index's SOURCE and --out) do not stop the listing.
    let matches = cli.clone().ignore_errors(true).try_get_matches_from(argv)?;
    let (_, command_matches) = matches.subcommand().expect("a command");
    let command = cli.find_subcommand(&name).expect("a known command");
    let rows = effective_settings(command, command_matches, &from_file);
    let width = rows.iter().map(|(flag, _, _)| flag.len()).max().unwrap_or(0);
    for (flag, value, source) in rows {
        println!("--{flag:<width$}  {value}  ({source})");
    }
    Ok(ExitCode::SUCCESS)
}
