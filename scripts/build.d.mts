/** Types of scripts/build.mjs, for the benchmark that bundles its worker with it. */
export declare const ROOT: string;
export declare const BUNDLED: readonly string[];
export declare const BUILDS: readonly { dir: string; entries: readonly string[] }[];
export declare function bundle(entryPoints: readonly string[], outdir: string, distRoot: string): Promise<void>;
export declare function buildDist(distRoot?: string): Promise<void>;
