/** The `App` spec: what to run, how many, on which port, with which environment and config data. */
import { z } from 'zod';
import { celRule } from '../../reconcilers';

/** The environment variable that carries the connection URL of the App's database. */
export const databaseUrlEnv = 'DATABASE_URL';

/** The spec schema of `App`. */
export const appSpec = celRule(
  z.object({
    image: z
      .string()
      .min(1)
      .max(512)
      .regex(/^[^\s]+$/, 'image must not contain whitespace')
      .describe('The container image, e.g. registry.spr.com/pony-spawner:v2.1.0.'),
    replicas: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .default(1)
      .describe("How many Pods run the image (the Deployment's replicas)."),
    progressDeadlineSeconds: z
      .number()
      .int()
      .min(10)
      .max(86400)
      .default(600)
      .describe(
        'How long a rollout may make no progress before the Deployment reports ProgressDeadlineExceeded and the App turns Degraded with that reason.',
      ),
    port: z.number().int().min(1).max(65535).default(8080).describe("The container's port, also the Service's port."),
    env: celRule(
      z
        .array(
          z.object({
            name: z
              .string()
              .min(1)
              .max(256)
              .regex(/^[A-Za-z_][A-Za-z0-9_.-]*$/)
              .describe("The variable's name (unique in the list)."),
            value: z.string().max(32768).default('').describe("The variable's value."),
          }),
        )
        .max(100),
      // A repeated name would leave the container with whichever value the kubelet applies last.
      { rule: 'self.all(e, self.exists_one(f, f.name == e.name))', message: 'env names must be unique' },
      (env) => new Set(env.map((e) => e.name)).size === env.length,
    )
      .default([])
      .describe('Environment variables of the container.'),
    config: z
      .record(z.string().regex(/^[-._a-zA-Z0-9]+$/), z.string())
      .default({})
      .describe('Config data: written to the ConfigMap <name>-config and mounted at /etc/app, one file per key.'),
    databaseRef: z
      .object({
        name: z
          .string()
          .min(1)
          .max(253)
          .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'databaseRef.name must be a Kubernetes object name')
          .describe('The name of the PostgresDatabase.'),
      })
      .optional()
      .describe(
        "A PostgresDatabase in the App's namespace whose connection Secret the container gets as DATABASE_URL (a secretKeyRef to the Secret's url key: the URL never passes through the spec).",
      ),
    approvals: z
      .object({
        imageRepository: z
          .boolean()
          .default(false)
          .describe(
            'A change of spec.image to another repository (registry or path; a new tag or digest alone does not count) waits, phase AwaitingApproval, with the Deployment unchanged, until a caller with the RBAC verb approve approves it (POST …/approve, homeostat approve).',
          ),
      })
      .default({ imageRepository: false })
      .describe('Changes to this App that wait for a person’s approval. Off by default.'),
  }),
  // Two DATABASE_URLs would leave the container with whichever the kubelet applies last.
  {
    rule: "!has(self.databaseRef) || !has(self.env) || self.env.all(e, e.name != 'DATABASE_URL')",
    message: 'env must not set DATABASE_URL when databaseRef is set: the database provides it',
    fieldPath: '.env',
  },
  (spec) => spec.databaseRef === undefined || spec.env.every((e) => e.name !== databaseUrlEnv),
);

/** A parsed `App` spec. */
export type AppSpec = z.output<typeof appSpec>;
