//! `--config FILE` (or `QUARRY_CONFIG`) for `quarry serve` and `quarry index`: a TOML file of
//! settings, each key a flag's long name (`llm-url`, or `llm_url`), at the top level (for
//! whichever of the two commands has the flag) or under `[serve]` / `[index]` (for that command
//! only). A flag given on the command line wins over its environment variable, the environment
//! over the file, the file over the default: a key is applied only where its flag was neither
//! given nor set by its variable. A key no flag has is an error naming the key, the file and
//! its line; so is a value of the wrong kind. A switch (`read-only = true`) is set by `true`;
//! a repeatable flag takes an array (`collection = ["a=/srv/a", "b=s3://b/"]`).

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches, Command};

/// The commands that read a settings file.
pub const COMMANDS: [&str; 2] = ["serve", "index"];

/// The flag that names the file.
const CONFIG_FLAG: &str = "config";

/// Where a setting of the command being run came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    Flag,
    Env(String),
    /// The file and the line of the key.
    File(PathBuf, usize),
    Default,
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Flag => write!(f, "flag"),
            Self::Env(name) => write!(f, "environment {name}"),
            Self::File(path, line) => write!(f, "file {}:{line}", path.display()),
            Self::Default => write!(f, "default"),
        }
    }
}

/// The settings taken from the file, by flag id: the file and the key's line.
pub type FromFile = HashMap<String, (PathBuf, usize)>;

/// `argv` with the settings file's settings added for the command it runs (unchanged when it
/// runs another command or names no file), and the keys taken from the file.
pub fn with_settings_file(cli: &Command, argv: Vec<OsString>) -> Result<(Vec<OsString>, FromFile), String> {
    let lenient = cli.clone().ignore_errors(true);
    let Ok(matches) = lenient.try_get_matches_from(&argv) else {
        return Ok((argv, HashMap::new()));
    };
    let Some((name, command_matches)) = matches.subcommand() else {
        return Ok((argv, HashMap::new()));
    };
    if !COMMANDS.contains(&name) {
        return Ok((argv, HashMap::new()));
    }
    let path = match command_matches.try_get_one::<PathBuf>(CONFIG_FLAG) {
        Ok(Some(path)) => path.clone(),
        _ => return Ok((argv, HashMap::new())),
    };
    let settings = read_settings(cli, &path)?;
    let command = cli.find_subcommand(name).expect("a known command");
    let mut added: Vec<OsString> = Vec::new();
    let mut from_file = HashMap::new();
    for setting in settings.iter().filter(|s| s.section.is_none_or(|s| s == name)) {
        let Some(arg) = flag_of(command, &setting.key) else {
            continue; // A top-level key of the other command.
        };
        let id = arg.get_id().as_str();
        if matches!(
            command_matches.value_source(id),
            Some(ValueSource::CommandLine | ValueSource::EnvVariable)
        ) {
            continue;
        }
        added.extend(flag_values(arg, &setting.value).map_err(|why| setting.error(&path, why))?);
        from_file.insert(id.to_string(), (path.clone(), setting.line));
    }
    // After the command's name, so a trailing `--` of the command line keeps its meaning.
    let at = argv.iter().position(|a| a == name).map_or(argv.len(), |i| i + 1);
    let mut argv = argv;
    argv.splice(at..at, added);
    Ok((argv, from_file))
}

/// One key of the file.
struct Setting {
    /// `[serve]` or `[index]`, or None at the top level.
    section: Option<&'static str>,
    key: String,
    value: toml::Value,
    line: usize,
}

impl Setting {
    fn error(&self, path: &Path, why: String) -> String {
        format!("{}:{}: setting `{}`: {why}", path.display(), self.line, self.key)
    }
}

/// The file's settings, each checked against the flags of the commands it may be for.
fn read_settings(cli: &Command, path: &Path) -> Result<Vec<Setting>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("settings file {}: {e}", path.display()))?;
    let table: toml::Table = toml::from_str(&text).map_err(|e| format!("settings file {}: {e}", path.display()))?;
    let lines = KeyLines::of(&text);
    let mut settings = Vec::new();
    for (key, value) in table {
        match (COMMANDS.iter().find(|c| **c == key), value) {
            (Some(&section), toml::Value::Table(keys)) => {
                for (key, value) in keys {
                    let line = lines.line_of(Some(section), &key);
                    let setting = Setting {
                        section: Some(section),
                        key,
                        value,
                        line,
                    };
                    if flag_of(cli.find_subcommand(section).expect("a known command"), &setting.key).is_none() {
                        return Err(setting.error(path, format!("`quarry {section}` has no such flag")));
                    }
                    settings.push(setting);
                }
            }
            (_, value) => {
                let line = lines.line_of(None, &key);
                let setting = Setting {
                    section: None,
                    key,
                    value,
                    line,
                };
                let known = COMMANDS
                    .iter()
                    .any(|c| flag_of(cli.find_subcommand(c).expect("a known command"), &setting.key).is_some());
                if !known {
                    return Err(setting.error(path, "neither `quarry serve` nor `quarry index` has such a flag".into()));
                }
                settings.push(setting);
            }
        }
    }
    Ok(settings)
}

/// The flag a key names (`llm-url` or `llm_url`); the file cannot name itself.
fn flag_of<'a>(command: &'a Command, key: &str) -> Option<&'a Arg> {
    let long = key.replace('_', "-");
    command
        .get_arguments()
        .find(|arg| arg.get_long() == Some(long.as_str()) && arg.get_id() != CONFIG_FLAG)
}

/// The command-line words that set `arg` to `value`.
fn flag_values(arg: &Arg, value: &toml::Value) -> Result<Vec<OsString>, String> {
    let long = arg.get_long().expect("a long flag");
    let word = |value: &toml::Value| -> Result<String, String> {
        match value {
            toml::Value::String(s) => Ok(s.clone()),
            toml::Value::Integer(i) => Ok(i.to_string()),
            toml::Value::Float(f) => Ok(f.to_string()),
            toml::Value::Boolean(b) => Ok(b.to_string()),
            other => Err(format!(
                "expected a string, number or boolean, got {}",
                other.type_str()
            )),
        }
    };
    let takes_no_value = matches!(
        arg.get_action(),
        ArgAction::SetTrue | ArgAction::SetFalse | ArgAction::Count
    );
    match value {
        toml::Value::Boolean(on) if takes_no_value => Ok(match on {
            true => vec![format!("--{long}").into()],
            false => Vec::new(),
        }),
        _ if takes_no_value => Err(format!("--{long} is a switch: expected true or false")),
        toml::Value::Array(items) => {
            if !matches!(arg.get_action(), ArgAction::Append) {
                return Err(format!("--{long} takes one value, not an array"));
            }
            items
                .iter()
                .map(|item| Ok(format!("--{long}={}", word(item)?).into()))
                .collect()
        }
        value => Ok(vec![format!("--{long}={}", word(value)?).into()]),
    }
}

/// The line each key of the file is on, found by reading it line by line (section headers
/// and `key =` lines).
struct KeyLines {
    keys: Vec<(Option<String>, String, usize)>,
}

impl KeyLines {
    fn of(text: &str) -> Self {
        let mut section: Option<String> = None;
        let mut keys = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if let Some(name) = line.strip_prefix('[').and_then(|l| l.split(']').next()) {
                section = Some(name.trim().to_string());
            } else if let Some((key, _)) = line.split_once('=') {
                let key = key.trim().trim_matches(|c| c == '"' || c == '\'');
                if !key.is_empty() && !line.starts_with('#') {
                    keys.push((section.clone(), key.to_string(), i + 1));
                }
            }
        }
        Self { keys }
    }

    fn line_of(&self, section: Option<&str>, key: &str) -> usize {
        self.keys
            .iter()
            .find(|(s, k, _)| s.as_deref() == section && k == key)
            .map_or(0, |(_, _, line)| *line)
    }
}

/// Every setting of the command `matches` ran, with its value and where it came from;
/// secrets (flags whose environment values are hidden) shown as `(set)`.
pub fn effective_settings(
    command: &Command,
    matches: &ArgMatches,
    from_file: &FromFile,
) -> Vec<(String, String, Source)> {
    let mut rows = Vec::new();
    for arg in command.get_arguments() {
        let (Some(long), id) = (arg.get_long(), arg.get_id().as_str()) else {
            continue;
        };
        if ["help", "version"].contains(&id) {
            continue;
        }
        let values: Vec<String> = matches
            .get_raw(id)
            .map(|raw| raw.map(|v| v.to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        let source = match (matches.value_source(id), from_file.get(id)) {
            (Some(ValueSource::CommandLine), Some((path, line))) => Source::File(path.clone(), *line),
            (Some(ValueSource::CommandLine), None) => Source::Flag,
            (Some(ValueSource::EnvVariable), _) => Source::Env(
                arg.get_env()
                    .map(|e| e.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
            _ => Source::Default,
        };
        let shown = match (arg.is_hide_env_values_set(), values.is_empty()) {
            (_, true) => "(not set)".to_string(),
            (true, false) => "(set)".to_string(),
            (false, false) => values.join(", "),
        };
        rows.push((long.to_string(), shown, source));
    }
    rows
}
