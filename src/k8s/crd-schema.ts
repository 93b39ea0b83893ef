// Reads the CRD manifest shipped with the package and returns the schema the API server enforces,
// so that admission validates against exactly the same definition.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

export const CRD_FILE = 'webhook-config/crd/resourcedistributions.apps.kruise.io.yaml';
const SERVED_VERSION = 'v1alpha1';

/** The nearest folder holding package.json above this module: works from src/ (tsx) and dist/ (built). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json not found above the crd-schema module');
    dir = parent;
  }
  return dir;
}

interface CrdVersion {
  name?: string;
  schema?: { openAPIV3Schema?: object };
}

function findSchema(documents: unknown[]): object | undefined {
  for (const document of documents) {
    const crd = document as { kind?: string; spec?: { versions?: CrdVersion[] } } | null;
    if (crd?.kind !== 'CustomResourceDefinition') continue;
    const version = crd.spec?.versions?.find((v) => v.name === SERVED_VERSION);
    if (version?.schema?.openAPIV3Schema !== undefined) return version.schema.openAPIV3Schema;
  }
  return undefined;
}

/** The v1alpha1 openAPIV3Schema of the ResourceDistribution CRD at `path` (default: the packaged one). */
export function loadCrdSchema(path?: string): object {
  const file = path ?? resolve(packageRoot(), CRD_FILE);
  const documents = parseAllDocuments(readFileSync(file, 'utf8')).map((document) => document.toJS() as unknown);
  const schema = findSchema(documents);
  if (schema === undefined) throw new Error(`no ${SERVED_VERSION} openAPIV3Schema in ${file}`);
  return schema;
}
