#!/usr/bin/env bash
# cfn-lint over the packaged templates (`npm run package` first): errors and warnings fail, except
# W3005 (a DependsOn the framework writes beside a Ref). cfn-lint is a Python tool (PyPI, which this
# kind of machine does not reach, and no Debian package): it runs where it is installed and says
# so plainly where it is not (docs/decisions.md).
set -euo pipefail
cd "$(dirname "$0")/.."
stage="${1:-sample}"
shopt -s nullglob
templates=(dist/package/"$stage"/*/cloudformation-template-update-stack.json)
if [ ${#templates[@]} -eq 0 ]; then
  echo "lint:templates: no packaged templates in dist/package/$stage (run: npm run package)" >&2
  exit 1
fi
if ! command -v cfn-lint >/dev/null 2>&1; then
  echo "lint:templates: SKIPPED, cfn-lint is not installed on this machine (pip install cfn-lint where PyPI is reachable); ${#templates[@]} templates packaged, not linted"
  exit 0
fi
echo "lint:templates: $(cfn-lint --version) on ${#templates[@]} templates of stage $stage"
cfn-lint --ignore-checks W3005 -- "${templates[@]}"
echo "lint:templates: 0 errors, 0 warnings"
