"""Session-wide pytest plugins (register new ones here, via the lead)."""

pytest_plugins = ["tests.support.postgres", "tests.support.openai_server", "tests.support.temporal"]
