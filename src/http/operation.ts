import type { Context } from 'openapi-backend';
import type { operations } from '../../generated/api.js';
import type { RequestState } from '../domain/context.js';

/**
 * The only place that bends the generated types into handler types: every handler is checked against the spec at
 * compile time (a missing operation or a wrong body is a type error).
 */
export type OperationId = keyof operations;
type Json<T> = T extends { content: { 'application/json': infer B } } ? B : never;
/** A response's body type, whatever its media type (JSON, or text such as `text/calendar`). */
type Content<T> = T extends { content: infer C } ? C[keyof C] : never;
type Some<T> = [T] extends [never] ? unknown : T; // openapi-backend's Context dislikes `never`
type Path<O extends OperationId> = Some<NonNullable<operations[O]['parameters']['path']>>;
type Query<O extends OperationId> = Some<NonNullable<operations[O]['parameters']['query']>>;
type Body<O extends OperationId> = Some<Json<NonNullable<operations[O]['requestBody']>>>;
type Res<O extends OperationId> = operations[O]['responses'];

/** A successful answer of an operation: one of its declared statuses with the body the spec gives it. */
export type Reply<O extends OperationId> = {
  [S in keyof Res<O>]: S extends 200 | 201 ? { status: S; body: Content<Res<O>[S]>; headers?: Record<string, string> } : never;
}[keyof Res<O>];

export type OperationContext<O extends OperationId> = Context<Body<O>, Path<O>, Query<O>>;
export type OperationHandler<O extends OperationId> = (c: OperationContext<O>, req: RequestState) => Reply<O> | Promise<Reply<O>>;
export type Handlers = { [O in OperationId]: OperationHandler<O> };

/** Request body type of an operation (for helpers shared by handlers). */
export type RequestBody<O extends OperationId> = Body<O>;
export type QueryOf<O extends OperationId> = Query<O>;
