// The Lifecycle module; see README "Design" for what it holds. Filled in by its issue.
