"""``python -m devtensor.codegen``: see :func:`devtensor.codegen.main`."""

from devtensor.codegen import main

raise SystemExit(main())
