//! `quarry completions SHELL` and `quarry man`: generated from the clap definitions, so they
//! name every command and option the binary takes.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// bash, zsh, fish, elvish or powershell.
    pub shell: clap_complete::Shell,
}

#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write quarry.1 and one page per command (quarry-index.1, ...) into this folder instead
    /// of printing quarry.1.
    #[arg(long)]
    pub out_dir: Option<PathBuf>,
}

pub fn completions(args: CompletionsArgs, mut command: clap::Command) -> anyhow::Result<ExitCode> {
    clap_complete::generate(args.shell, &mut command, "quarry", &mut std::io::stdout());
    Ok(ExitCode::SUCCESS)
}

pub fn man(args: ManArgs, command: clap::Command) -> anyhow::Result<ExitCode> {
    let Some(dir) = args.out_dir else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command).render(&mut page)?;
        std::io::stdout().write_all(&page)?;
        return Ok(ExitCode::SUCCESS);
    };
    std::fs::create_dir_all(&dir)?;
    // Hidden commands (the parse worker) get no page, as they get no help entry.
    clap_mangen::generate_to(command, &dir)?;
    Ok(ExitCode::SUCCESS)
}
