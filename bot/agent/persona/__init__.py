"""Who answers: personas and their routes, the model each chat chose, and their turn runners."""
