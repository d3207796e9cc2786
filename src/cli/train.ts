// `agent-r1 train`: the config -> trainerFromConfig -> Trainer.fit(), with a summary at the end.
// The native addon is loaded only when the command runs (`agent-r1 config` stays light).
import { Command } from 'commander';
import { loadConfigWithInfo } from '../config/index.js';
import { UserError } from '../errors.js';
import { ProgressBars } from './progress.js';
import { importUserModules } from './user-modules.js';

export interface TrainCommandOptions {
  config?: string;
  /** User modules (.ts or .js) imported in order before the config is checked: they register tools, envs, flows, reward functions. */
  import?: string[];
  /** Where the command's own notes go (what was loaded, the summary); default console.log. Step lines print either way. */
  print?: (line: string) => void;
}

/** Runs a training job from a config file and overrides; returns the last step's metrics. */
export async function runTrain(
  overrides: readonly string[],
  opts: TrainCommandOptions = {},
): Promise<Record<string, number>> {
  // first, so that the config's and the rows' names (estimators, flows, envs, tools) can refer to what they register
  await importUserModules(opts.import ?? []);
  const { config, addedKeys } = loadConfigWithInfo({ configFile: opts.config, overrides });
  if (addedKeys.length) process.stderr.write(`note: added keys agent-r1 does not read: ${addedKeys.join(', ')}\n`);
  const { trainerFromConfig } = await import('./training-run.js');
  const print = opts.print ?? ((line: string) => console.log(line));
  const started = performance.now();
  const bars = new ProgressBars();
  let run: Awaited<ReturnType<typeof trainerFromConfig>> | undefined;
  run = await trainerFromConfig(config, {
    log: print,
    onProgress: (e) =>
      bars.update(e.phase, e.done, e.total, { step: e.step, totalSteps: run?.trainer.totalTrainingSteps }),
    printLine: (line) => bars.log(line),
  });
  try {
    const { trainer } = run;
    const t = trainer.options;
    print(
      `train: ${trainer.totalTrainingSteps} steps of ${t.algorithm.advEstimator}, ${t.data.trainBatchSize} prompts x n=${t.rollout.n} per step, ` +
        `flow ${t.rollout.defaultAgentFlow}, responses up to ${t.rollout.sampling.maxTokens} tokens (loaded in ${((performance.now() - started) / 1000).toFixed(1)} s)`,
    );
    const fitStarted = performance.now();
    const last = await trainer.fit().finally(() => bars.stop());
    const seconds = (performance.now() - fitStarted) / 1000;
    if (trainer.stepsRun > 0 && trainer.stepsTrained === 0) {
      // a run that trained nothing is a failure, whatever the loop's exit: say why and exit non-zero
      throw new UserError(
        `no step trained: all ${trainer.stepsRun} steps were skipped, with nothing to train on (last: ${trainer.lastSkipReason})`,
      );
    }
    const val = last['val/reward_mean'];
    print(
      `done: ${trainer.globalStep} steps in ${seconds.toFixed(1)} s` +
        (last['reward/trajectory_mean'] !== undefined
          ? `; last batch reward ${last['reward/trajectory_mean'].toFixed(3)}`
          : '') +
        (val !== undefined ? `; validation reward ${val.toFixed(3)} on ${run.valData.length} rows` : ''),
    );
    if (trainer.stepsRun > trainer.stepsTrained)
      print(
        `note: ${trainer.stepsRun - trainer.stepsTrained} of ${trainer.stepsRun} steps were skipped (nothing to train on)`,
      );
    if (t.trainer.saveFreq > 0)
      print(
        `checkpoint: ${run.checkpointDir}/global_step_${trainer.globalStep} (actor/ is a Hugging Face model folder)`,
      );
    print(`metrics: ${run.metricsPath}`);
    if (t.trainer.fileLoggerPath) print(`file logger: ${t.trainer.fileLoggerPath}`);
    if (t.trainer.tensorboardDir)
      print(`tensorboard: ${t.trainer.tensorboardDir} (tensorboard --logdir ${t.trainer.tensorboardDir})`);
    return last;
  } finally {
    run.dispose();
  }
}

export function trainCommand(overrideHelp: string): Command {
  return new Command('train')
    .description(
      'Train with RL: the datasets (data.train_files, data.val_files); the policy and its tokenizer from the local folder ' +
        'actor_rollout_ref.model.path; a reference for the KL loss / KL in the reward; a critic for gae and token_gae ' +
        "(critic.model.path, the actor's folder by default); rollouts through the in-process engine on trainer.device " +
        '(cuda when available, else cpu). Metrics go to <trainer.default_local_dir>/metrics.jsonl, checkpoints ' +
        '(trainer.save_freq > 0) to <trainer.default_local_dir>/global_step_N.',
    )
    .option('-c, --config <file>', 'a YAML config file to merge over the defaults')
    .option(
      '-i, --import <module>',
      'a TypeScript or JavaScript module to import first, which registers tools, envs, flows or reward functions (repeatable)',
      (file: string, files: string[]) => [...files, file],
      [] as string[],
    )
    .argument('[overrides...]', 'dotted overrides, e.g. algorithm.adv_estimator=grpo actor_rollout_ref.rollout.n=4')
    .addHelpText('after', overrideHelp)
    .action(async (overrides: string[], opts: TrainCommandOptions) => {
      // trainer.n_gpus_per_node > 1 on one machine: this process starts the ranks (each runs this command)
      if (process.env.RANK === undefined) {
        const { config } = loadConfigWithInfo({ configFile: opts.config, overrides });
        const ranks = config.trainer.nnodes * config.trainer.n_gpus_per_node;
        if (config.trainer.nnodes === 1 && ranks > 1) {
          const { launchLocalRanks } = await import('./launch.js');
          await launchLocalRanks(ranks);
          return;
        }
      }
      // a rank of `agent-r1 train trainer.n_gpus_per_node=N` stops when its launcher does
      const { watchLauncher } = await import('./launch.js');
      watchLauncher();
      await runTrain(overrides, opts);
    });
}
