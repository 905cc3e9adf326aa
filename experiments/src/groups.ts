import { group1 } from "./group-1.js";
import { group2 } from "./group-2.js";
import { group3 } from "./group-3.js";
import { group4 } from "./group-4.js";
import { group5 } from "./group-5.js";

export const GROUPS = { "group-1": group1, "group-2": group2, "group-3": group3, "group-4": group4, "group-5": group5 } as const;
