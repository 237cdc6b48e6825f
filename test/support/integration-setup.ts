/** Per-file setup of integration tests: real servers take longer than jest's 5 s default. */
jest.setTimeout(180_000);
