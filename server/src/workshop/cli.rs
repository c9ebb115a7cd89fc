//! `oversold exercise list | show ID | check ID FILE`: the workshop in a terminal (and in a
//! teacher's CI: `check` exits 0 on a pass, 1 on a fail, 2 on a usage error).

use std::io::Write as _;
use std::path::PathBuf;

use oversold_protocol::workshop::SolutionVerdict;

use super::exercises::{self, Exercise};
use super::service;

/// `oversold exercise …`.
#[derive(Debug, clap::Subcommand)]
pub enum ExerciseCommand {
    /// Every exercise: id and title.
    List {
        /// One JSON array instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// One exercise: its story, contract, starter script and hints.
    Show {
        /// The exercise's id (see `exercise list`).
        id: String,
        /// One JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Judge FILE as a solution. Exit code 0 when it passes, 1 when it fails, 2 on a usage
    /// error (an unknown exercise, an unreadable or too large file).
    Check {
        /// The exercise's id.
        id: String,
        /// The Lua script.
        file: PathBuf,
        /// One JSON object (`passed`, `verdict`, `message`, `counterexample`, `figures`).
        #[arg(long)]
        json: bool,
    },
}

/// A pass.
pub const PASSED: i32 = 0;
/// A fail.
pub const FAILED: i32 = 1;
/// A usage error.
pub const USAGE: i32 = 2;

/// Run the command; returns the exit code.
pub async fn run(command: ExerciseCommand) -> i32 {
    match command {
        ExerciseCommand::List { json } => {
            list(json);
            PASSED
        }
        ExerciseCommand::Show { id, json } => match exercises::find(&id) {
            Some(e) => {
                show(e, json);
                PASSED
            }
            None => usage(&format!(
                "no exercise is called {id:?}; see `oversold exercise list`"
            )),
        },
        ExerciseCommand::Check { id, file, json } => {
            let source = match std::fs::read_to_string(&file) {
                Ok(s) => s,
                Err(e) => return usage(&format!("cannot read {}: {e}", file.display())),
            };
            if let Err(e) = service::admit(&id, &source) {
                return usage(&e.message);
            }
            match service::check_once(&id, &source).await {
                Ok(verdict) => {
                    print_verdict(&verdict, json);
                    if verdict.passed { PASSED } else { FAILED }
                }
                Err(e) => {
                    eprintln!("error: the check could not run: {}", e.message);
                    FAILED
                }
            }
        }
    }
}

fn usage(why: &str) -> i32 {
    eprintln!("error: {why}");
    USAGE
}

fn list(json: bool) {
    let all = exercises::all();
    if json {
        let infos: Vec<_> = all.iter().map(|e| e.info()).collect();
        println!(
            "{}",
            serde_json::to_string_pretty(&infos).expect("serializes")
        );
        return;
    }
    for e in all {
        println!("{:<14} {}", e.id, e.title);
    }
}

fn show(e: &Exercise, json: bool) {
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&e.info()).expect("serializes")
        );
        return;
    }
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "{}: {}\n\n{}\n\nContract:\n{}\n",
        e.id,
        e.title,
        e.story,
        e.contract()
    );
    let _ = writeln!(
        out,
        "Starter ({} lines; save it, fix it, then `oversold exercise check {} FILE`):\n",
        e.starter.lines().count(),
        e.id
    );
    let _ = writeln!(out, "{}", e.starter);
    for (i, hint) in e.hints.iter().enumerate() {
        let _ = writeln!(out, "Hint {}: {hint}", i + 1);
    }
}

fn print_verdict(v: &SolutionVerdict, json: bool) {
    if json {
        println!("{}", serde_json::to_string_pretty(v).expect("serializes"));
        return;
    }
    let head = if v.passed { "PASSED" } else { "FAILED" };
    println!(
        "{head} ({}) in {} ms: {}",
        v.verdict.as_str(),
        v.took_ms,
        v.message
    );
    if let Some(c) = &v.counterexample {
        println!(
            "\nThe smallest crowd that breaks it: {}",
            c.setup.join(", ")
        );
        for line in &c.tape {
            let indent = if line.inside { "      " } else { "" };
            let who = match line.buyer {
                0 => "reaper  ".to_string(),
                buyer => format!("buyer {buyer:>2}"),
            };
            let mut text = format!("  {who}  {indent}{}", line.command);
            if !line.inside {
                text.push_str(&format!("  -> {}", line.reply));
                if let Some(after) = &line.stock_after {
                    text.push_str(&format!("  (then {after})"));
                }
                if let Some(want) = &line.expected {
                    text.push_str(&format!("  <- the contract: {want}"));
                }
            }
            println!("{text}");
        }
    }
}
