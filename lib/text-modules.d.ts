// Text files imported as strings (esbuild's `text` loader in esbuild.config.cjs; the `.sh`
// transform in jest.config.js): e.g. the console upgrade script of the fleet's upgrade packs.
declare module '*.sh' {
  const text: string;
  export default text;
}
