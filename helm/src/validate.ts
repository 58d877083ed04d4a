// Validates rendered manifests against the Kubernetes API schemas (kubernetes-models: the OpenAPI
// definitions of the API server, compiled to JSON-schema validators). It checks types, required
// fields and enums; like the API server's default, it does not refuse unknown fields, so the tests
// assert the fields that matter by value.
import { ConfigMap } from 'kubernetes-models/v1/ConfigMap';
import { Secret } from 'kubernetes-models/v1/Secret';
import { Service } from 'kubernetes-models/v1/Service';
import { Deployment } from 'kubernetes-models/apps/v1/Deployment';
import { StatefulSet } from 'kubernetes-models/apps/v1/StatefulSet';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1/PodDisruptionBudget';
import type { Manifest } from './render.ts';

interface Validatable {
  validate(): void;
}
type ModelCtor = new (data: never) => Validatable;

const MODELS: ReadonlyMap<string, ModelCtor> = new Map<string, ModelCtor>([
  ['v1/ConfigMap', ConfigMap as unknown as ModelCtor],
  ['v1/Secret', Secret as unknown as ModelCtor],
  ['v1/Service', Service as unknown as ModelCtor],
  ['apps/v1/Deployment', Deployment as unknown as ModelCtor],
  ['apps/v1/StatefulSet', StatefulSet as unknown as ModelCtor],
  ['policy/v1/PodDisruptionBudget', PodDisruptionBudget as unknown as ModelCtor],
]);

/** Throws naming the manifest and the schema violation; a kind this chart should not emit is an error too. */
export function validateManifest(m: Manifest): void {
  const Model = MODELS.get(`${m.apiVersion}/${m.kind}`);
  if (Model === undefined) throw new Error(`${m.template}: ${m.apiVersion} ${m.kind} has no model here`);
  const { template: _template, ...data } = m;
  try {
    new Model(data as never).validate();
  } catch (err) {
    throw new Error(`${m.template}: ${m.kind}/${m.metadata.name}: ${(err as Error).message}`);
  }
}
