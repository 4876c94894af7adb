//! The options of one shard of a sharded run (`quarry index --shards N`), with the shard and
//! the run id read from the array-job scheduler's variables when not given.

use quarry_indexer::pipeline::ShardRun;

use super::at_least_one;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct ShardArgs {
    /// Run as one shard of a sharded run of this many shards (the tasks of an array job): index
    /// the files whose URI hashes to this shard and record the part under runs/<run id>/ of the
    /// snapshot root instead of publishing; `quarry publish` (or --publish-when-complete)
    /// publishes the run as one version.
    #[arg(long, env = "QUARRY_SHARDS", value_parser = at_least_one::<usize>)]
    pub shards: Option<usize>,
    /// This shard, 0-based. Default: the scheduler's task index (JOB_COMPLETION_INDEX on a
    /// Kubernetes Indexed Job, SLURM_ARRAY_TASK_ID - SLURM_ARRAY_TASK_MIN, AWS_BATCH_JOB_ARRAY_INDEX).
    #[arg(long, env = "QUARRY_SHARD", requires = "shards")]
    pub shard: Option<usize>,
    /// The run's id, the same for every shard. Default: SLURM_ARRAY_JOB_ID, or the array job's
    /// id from AWS_BATCH_JOB_ID (a Kubernetes Job passes its name: see deploy/).
    #[arg(long, env = "QUARRY_RUN_ID", requires = "shards")]
    pub run_id: Option<String>,
    /// Once this shard's part is recorded, publish the run if every shard has finished: the
    /// shard that finishes last publishes, the others say which shards they wait for.
    #[arg(long, env = "QUARRY_PUBLISH_WHEN_COMPLETE", requires = "shards")]
    pub publish_when_complete: bool,
}

/// What an array-job scheduler says about the task this process runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchedulerTask {
    pub index: usize,
    pub job_id: Option<String>,
    /// The variable the index came from.
    pub from: &'static str,
}

/// The task `env` (an environment lookup) describes, if a scheduler set one.
pub fn scheduler_task(env: &dyn Fn(&str) -> Option<String>) -> Result<Option<SchedulerTask>, String> {
    let number = |name: &str| -> Result<Option<usize>, String> {
        env(name)
            .map(|value| {
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("{name}=`{value}` is not a task index"))
            })
            .transpose()
    };
    if let Some(index) = number("JOB_COMPLETION_INDEX")? {
        return Ok(Some(SchedulerTask {
            index,
            job_id: None,
            from: "JOB_COMPLETION_INDEX",
        }));
    }
    if let Some(task) = number("SLURM_ARRAY_TASK_ID")? {
        let min = number("SLURM_ARRAY_TASK_MIN")?.unwrap_or(0);
        let index = task
            .checked_sub(min)
            .ok_or_else(|| format!("SLURM_ARRAY_TASK_ID={task} is below SLURM_ARRAY_TASK_MIN={min}"))?;
        return Ok(Some(SchedulerTask {
            index,
            job_id: env("SLURM_ARRAY_JOB_ID"),
            from: "SLURM_ARRAY_TASK_ID",
        }));
    }
    if let Some(index) = number("AWS_BATCH_JOB_ARRAY_INDEX")? {
        // A child of an array job is `<array job id>:<index>`.
        let job_id = env("AWS_BATCH_JOB_ID").map(|id| id.split(':').next().unwrap_or_default().to_string());
        return Ok(Some(SchedulerTask {
            index,
            job_id,
            from: "AWS_BATCH_JOB_ARRAY_INDEX",
        }));
    }
    Ok(None)
}

impl ShardArgs {
    /// The shard this process runs as (None: not a sharded run), reading the scheduler's
    /// variables through `env` for what the flags leave out.
    pub fn shard_run(&self, env: &dyn Fn(&str) -> Option<String>) -> anyhow::Result<Option<ShardRun>> {
        let Some(shards) = self.shards else {
            return Ok(None);
        };
        let task = scheduler_task(env).map_err(anyhow::Error::msg)?;
        let shard = match (self.shard, &task) {
            (Some(shard), _) => shard,
            (None, Some(task)) => task.index,
            (None, None) => anyhow::bail!(
                "--shards {shards} without --shard, and no scheduler variable names the task (JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX)"
            ),
        };
        let run_id = match (&self.run_id, task.and_then(|t| t.job_id)) {
            (Some(run_id), _) => run_id.clone(),
            (None, Some(job_id)) => job_id,
            (None, None) => anyhow::bail!(
                "--shards {shards} without --run-id, and no scheduler variable names the job (SLURM_ARRAY_JOB_ID, AWS_BATCH_JOB_ID); every shard of a run must be given the same id"
            ),
        };
        Ok(Some(ShardRun::new(run_id, shard, shards)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| value.to_string())
        }
    }

    fn sharded(shards: usize) -> ShardArgs {
        ShardArgs {
            shards: Some(shards),
            ..Default::default()
        }
    }

    #[test]
    fn each_scheduler_names_the_task_and_the_job() {
        let kubernetes = env_of(&[("JOB_COMPLETION_INDEX", "2")]);
        let args = ShardArgs {
            run_id: Some("nightly-29388320".into()),
            ..sharded(3)
        };
        let run = args.shard_run(&kubernetes).unwrap().unwrap();
        assert_eq!((run.shard, run.shards, run.run_id.as_str()), (2, 3, "nightly-29388320"));

        // Slurm arrays may start at 1 (--array=1-4): the shard counts from the first task.
        let slurm = env_of(&[
            ("SLURM_ARRAY_TASK_ID", "4"),
            ("SLURM_ARRAY_TASK_MIN", "1"),
            ("SLURM_ARRAY_JOB_ID", "771"),
        ]);
        let run = sharded(4).shard_run(&slurm).unwrap().unwrap();
        assert_eq!((run.shard, run.run_id.as_str()), (3, "771"));

        let batch = env_of(&[("AWS_BATCH_JOB_ARRAY_INDEX", "0"), ("AWS_BATCH_JOB_ID", "4c9f-11:0")]);
        let run = sharded(2).shard_run(&batch).unwrap().unwrap();
        assert_eq!((run.shard, run.run_id.as_str()), (0, "4c9f-11"));
    }

    #[test]
    fn flags_win_over_the_scheduler_and_what_is_missing_is_named() {
        let slurm = env_of(&[("SLURM_ARRAY_TASK_ID", "1"), ("SLURM_ARRAY_JOB_ID", "771")]);
        let args = ShardArgs {
            shard: Some(0),
            run_id: Some("mine".into()),
            ..sharded(2)
        };
        let run = args.shard_run(&slurm).unwrap().unwrap();
        assert_eq!((run.shard, run.run_id.as_str()), (0, "mine"));

        let nothing = env_of(&[]);
        assert!(ShardArgs::default().shard_run(&nothing).unwrap().is_none());
        let no_task = sharded(3).shard_run(&nothing).unwrap_err().to_string();
        assert!(
            no_task.contains("without --shard") && no_task.contains("JOB_COMPLETION_INDEX"),
            "{no_task}"
        );
        let no_job = sharded(3)
            .shard_run(&env_of(&[("JOB_COMPLETION_INDEX", "0")]))
            .unwrap_err()
            .to_string();
        assert!(no_job.contains("without --run-id"), "{no_job}");
        let beyond = ShardArgs {
            run_id: Some("r".into()),
            ..sharded(3)
        }
        .shard_run(&env_of(&[("JOB_COMPLETION_INDEX", "3")]))
        .unwrap_err();
        assert!(beyond.to_string().contains("numbered 0 to 2"), "{beyond}");
        let garbled = scheduler_task(&env_of(&[("JOB_COMPLETION_INDEX", "two")])).unwrap_err();
        assert!(garbled.contains("JOB_COMPLETION_INDEX=`two`"), "{garbled}");
    }
}
