"""Session-wide pytest plugins (register new ones here, via the lead).

``tests.support.tiers`` puts every test in one tier (unit, integration, system); the
others give the tests their real servers, each started only when a test asks for it.
"""

pytest_plugins = [
    "tests.support.tiers",
    "tests.support.postgres",
    "tests.support.openai_server",
    "tests.support.temporal",
]
