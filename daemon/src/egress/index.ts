export { type AllowedHost, formatHost, hostOfUrl, isAllowed, parseAllowHost } from "./allowlist.js";
export { type Connect, type EgressEvent, EgressProxy, type EgressProxyOptions } from "./proxy.js";
export { NPM_DEFAULT_REGISTRY, type NpmRegistry, npmRegistry, npmrcHasAuth, registryOfNpmrc } from "./registry-config.js";
export { GO_DEFAULT_PROXY, GO_DEFAULT_SUMDB, type GoEnv, type GoProxyConfig, goProxyConfig, parseGoEnvFile } from "./go-config.js";
export { indexOfPipConf, indexOfRequirements, type PipEnv, type PipIndex, PYPI_FILES, PYPI_INDEX, pipIndex } from "./pip-config.js";
