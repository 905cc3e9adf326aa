/** Workspace: safe paths, the manifest and digest, the baseline in the control dir. */
export { resolveSafePath, normalizeRel, type SafePathResult, type SafePathOptions, type PathPurpose } from "./safe-path.js";
export { systemFolderOf, systemFolderRefusal, realPathOf, SYSTEM_FOLDERS } from "./system-folders.js";
export { createForbiddenMatcher, globMatcher, BUILTIN_FORBIDDEN, type Matcher } from "./forbidden.js";
export { computeManifest, changedPaths, Manifest, type ManifestOptions } from "./manifest.js";
export { baselineFilesDir, captureBaseline, loadBaseline, type Baseline } from "./baseline.js";
export { workspaceDigest, currentFileVersion } from "./version.js";
export { sha256Hex, canonicalJson } from "./hash.js";
export { checkCopySize, checkExportFits, checkLayerSize, copyRefusal, COPY_LIMITS, LAYER_LIMITS, type CopyLimits, type CopyWhat } from "./copy-limits.js";
export { measureTree, type TreeSize } from "./tree-size.js";
export {
  listExport,
  exportVerdict,
  createExportRule,
  openExported,
  changedWhileCopying,
  type ExportEntry,
  type ExportList,
  type ExportRule,
  type ExportVerdict,
} from "./sandbox-export.js";
export {
  DEPENDENCY_DIRS,
  INSTALL_INPUTS,
  LOCK_FILES,
  type InstalledDir,
  findDependencyDirs,
  dependencySkip,
  isDependencyPath,
  isDependencyDirName,
  type DependencyDir,
} from "./dependency-dirs.js";
export { installLookupKey, listLayerContent, type LayerContent, type LayerEntry, type ListLayerOptions } from "./dependency-export.js";
export { parseStatIndex, type LayerStatIndex } from "./layer-stat-index.js";
export { readVenv, type VenvFacts } from "./venv.js";
export { openNoFollow } from "./read.js";
