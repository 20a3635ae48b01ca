"""Small things every stage uses: the budgets of long searches, and timing."""
