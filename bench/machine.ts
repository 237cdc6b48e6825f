/** What a result records about where it was measured: machine, versions, date and commit. */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { cpus, loadavg, totalmem, type as osType, release } from 'node:os';
import { join } from 'node:path';
import * as k8s from '@kubernetes/client-node';
import type { Client } from '@temporalio/client';
import { goServers } from '../devstack/binaries';
import { repoRoot } from '../devstack/paths';

/** The machine and software a result was measured on. */
export interface Environment {
  readonly date: string;
  readonly gitCommit: string;
  readonly machine: {
    readonly cpuModel: string;
    readonly cores: number;
    readonly memGiB: number;
    readonly os: string;
    /** 1/5/15-minute load averages when the benchmark started (others' work shares the cores). */
    readonly loadAverageAtStart: readonly number[];
  };
  readonly versions: {
    readonly node: string;
    readonly temporalSdk: string;
    readonly temporalCli: string;
    readonly temporalServer: string;
    readonly kubernetes: string;
    readonly etcd: string;
    readonly kubernetesClientNode: string;
  };
}

function packageVersion(name: string): string {
  try {
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as {
      version?: string;
    };
    return pkg.version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

function gitCommit(): string {
  try {
    const sha = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: repoRoot, encoding: 'utf8' }).trim();
    const dirty = execFileSync(
      'git',
      ['status', '--porcelain', '--', 'bench', 'workflows', 'activities', 'informer-bridge', 'workers', 'reconcilers'],
      {
        cwd: repoRoot,
        encoding: 'utf8',
      },
    ).trim();
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return 'unknown';
  }
}

/** Reads the environment: the machine, the versions (servers asked where they tell), the commit. */
export async function describeEnvironment(kc: k8s.KubeConfig, temporal: Client): Promise<Environment> {
  const cpu = cpus();
  let kubernetes = 'unknown';
  try {
    kubernetes = (await kc.makeApiClient(k8s.VersionApi).getCode()).gitVersion;
  } catch {
    // recorded as unknown
  }
  let temporalServer = 'unknown';
  try {
    temporalServer = (await temporal.workflowService.getSystemInfo({})).serverVersion ?? 'unknown';
  } catch {
    // recorded as unknown
  }
  const version = (name: string): string => goServers.find((s) => s.name === name)?.version ?? 'unknown';
  return {
    date: new Date().toISOString(),
    gitCommit: gitCommit(),
    machine: {
      cpuModel: cpu[0]?.model ?? 'unknown',
      cores: cpu.length,
      memGiB: Number((totalmem() / 1024 ** 3).toFixed(1)),
      os: `${osType()} ${release()}`,
      loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
    },
    versions: {
      node: process.version,
      temporalSdk: packageVersion('@temporalio/worker'),
      temporalCli: version('temporal'),
      temporalServer,
      kubernetes,
      etcd: version('etcd'),
      kubernetesClientNode: packageVersion('@kubernetes/client-node'),
    },
  };
}
