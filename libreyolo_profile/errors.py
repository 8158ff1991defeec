"""The exit codes of the `libreyolo profile` group (SPEC §1) and the one error type that carries them."""

EXIT_OK = 0
EXIT_UNANALYSABLE = 1  # the trace could not be analysed
EXIT_USAGE = 2  # nonexistent file or unparsable argument
EXIT_NO_PROFILE = 3  # `run`/`infer` could not produce a profile
EXIT_REGRESSION = (
    4  # `compare --fail-on`: a rule found a significant regression or invalid evidence (or --strict-noise a noisy side)
)
EXIT_INCONCLUSIVE = 5  # `compare --fail-on --require-conclusive`: a rule could neither pass nor fail on the evidence


class ProfileError(Exception):
    """A failure the user can act on: printed as one line on stderr, then exit with `exit_code`."""

    def __init__(self, message: str, exit_code: int = EXIT_UNANALYSABLE):
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code


class UsageError(ProfileError):
    def __init__(self, message: str):
        super().__init__(message, EXIT_USAGE)


class UnanalysableError(ProfileError):
    def __init__(self, message: str):
        super().__init__(message, EXIT_UNANALYSABLE)
