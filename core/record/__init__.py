"""Recording flows: by demonstration in a browser, or by importing a Playwright codegen script."""
