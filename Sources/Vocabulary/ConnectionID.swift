/// A connection's number within one capture, from 1 in order of opening.
public typealias ConnectionID = Int
