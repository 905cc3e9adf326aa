export { type AllowedHost, formatHost, hostOfUrl, isAllowed, parseAllowHost } from "./allowlist.js";
export { type Connect, type EgressEvent, EgressProxy, type EgressProxyOptions } from "./proxy.js";
export { NPM_DEFAULT_REGISTRY, type NpmRegistry, npmRegistry, npmrcHasAuth, registryOfNpmrc } from "./registry-config.js";
