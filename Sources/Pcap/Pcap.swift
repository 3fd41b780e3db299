// The Pcap module; see README "Design" for what it holds. Filled in by its issue.
