// Thin client for the server extension's REST API (/dscluster/api/...).
// ServerConnection adds the token/XSRF headers JupyterLab uses for its own requests.
import { URLExt } from '@jupyterlab/coreutils';
import { ServerConnection } from '@jupyterlab/services';

export interface ApiError {
  error: string;
  message: string;
  hint?: string | null;
  setting?: string | null;
}

export class RequestError extends Error {
  constructor(
    public status: number,
    public body: ApiError
  ) {
    super(body.message);
  }
}

const settings = ServerConnection.makeSettings();

// JupyterLab's language (e.g. zh-TW): the server writes its messages and run explanations in it.
let language = '';

export function setLanguage(code: string): void {
  language = code;
}

export async function api<T = any>(
  path: string,
  init: RequestInit = {}
): Promise<T> {
  const url = URLExt.join(settings.baseUrl, 'dscluster/api', path);
  const headers = new Headers(init.headers);
  if (language) {
    headers.set('X-Dscluster-Lang', language);
  }
  const response = await ServerConnection.makeRequest(url, { ...init, headers }, settings);
  const text = await response.text();
  let data: any = {};
  try {
    data = text ? JSON.parse(text) : {};
  } catch {
    data = { error: 'BadResponse', message: text.slice(0, 300) };
  }
  if (!response.ok) {
    throw new RequestError(response.status, data as ApiError);
  }
  return data as T;
}

export function post<T = any>(path: string, body: unknown = {}): Promise<T> {
  return api<T>(path, { method: 'POST', body: JSON.stringify(body) });
}

import type { GpuHistory } from './gpuhistory';

export interface GpuSample {
  index: number;
  name?: string;
  util?: number | null;
  mem_used?: number | null;
  mem_total?: number | null;
  power_w?: number | null;
  temp_c?: number | null;
}

export interface NodeSample {
  time: number;
  age_s?: number;
  stale?: boolean;
  cpu?: { percent?: number | null; count?: number; load1?: number | null };
  memory?: { total?: number; used?: number };
  gpus?: GpuSample[];
}

export interface NodeInfo {
  name: string;
  address: string;
  slots: number | null;
  local: boolean;
  gpu_count: number;
  sample: NodeSample | null;
  history?: GpuHistory;
}

export interface ClusterInfo {
  name: string;
  source: string;
  spec_path: string | null;
  shared_dir: string;
  world_size: number;
  nodes: NodeInfo[];
  error: ApiError | null;
}

export interface RunSummary {
  id: string;
  name: string;
  status: string;
  created?: string;
  step?: number | null;
  total_steps?: number | null;
  loss?: number | null;
  tokens_per_s?: number | null;
  world_size?: number | null;
  attempts?: number;
  owner?: string | null;
  mine?: boolean; // this lab's user may stop/restart it (its owner, or root)
  gpus?: string[]; // the GPUs it holds (GPU leases)
  queue_position?: number | null;
}

export interface Claim {
  run_id: string;
  owner: string;
  gpus: [string, number][];
  since?: number | null;
  queued?: number;
  position?: number;
  behind?: string[];
}

export interface QueueInfo {
  held: Claim[];
  queue: Claim[];
  me: string;
}

export interface LogFile {
  name: string;
  size: number;
}

export interface Since<T> {
  records: T[];
  offset: number;
}

export function fmtBytes(n?: number | null): string {
  if (n === null || n === undefined) {
    return '–';
  }
  const gib = n / 1024 ** 3;
  return gib >= 1 ? `${gib.toFixed(1)} GiB` : `${(n / 1024 ** 2).toFixed(0)} MiB`;
}

export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Record<string, string> = {},
  ...children: (Node | string)[]
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'class') {
      node.className = v;
    } else {
      node.setAttribute(k, v);
    }
  }
  for (const child of children) {
    node.append(child);
  }
  return node;
}
